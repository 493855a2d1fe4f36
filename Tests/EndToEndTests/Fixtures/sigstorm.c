// A thread that frees and allocates 24-byte blocks (tcache only: no lock of glibc's) while
// another floods it with SIGUSR1, whose handler allocates and frees in other size classes (so
// it never waits for a lock that the code it interrupted holds, untraced). Under a tracer, a
// handler's free that lands inside the tracer is done later: done with signals open, the next
// handler's allocation waited for the arena lock that free held, forever.
//
//   sigstorm N    N pairs on the main thread
#define _GNU_SOURCE
#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile long hits;
static volatile int stop;
static pid_t main_tid;

static void handler(int sig) {
  (void)sig;
  void *p;
  switch (hits & 3) {
  case 0: p = malloc(1001); break;
  case 1: p = calloc(1, 1002); break;
  case 2: p = memalign(64, 1003); break;
  default: p = aligned_alloc(64, 1024); break;
  }
  free(p);
  hits++;
}

static void *storm(void *arg) {
  (void)arg;
  while (!stop) {
    syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
    for (volatile int i = 0; i < 200; i++) {
    }
  }
  return NULL;
}

int main(int argc, char **argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 300000;
  main_tid = (pid_t)syscall(SYS_gettid);
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = handler;
  sa.sa_flags = SA_RESTART;
  sigaction(SIGUSR1, &sa, NULL);
  void *warm = malloc(24);
  free(warm);
  pthread_t t;
  pthread_create(&t, NULL, storm, NULL);
  for (long r = 0; r < pairs; r++) free(malloc(24));
  stop = 1;
  pthread_join(t, NULL);
  printf("done\n");
  return hits > 0 ? 0 : 1;
}
