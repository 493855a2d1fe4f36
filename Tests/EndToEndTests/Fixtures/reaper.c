// A program that reaps its children in a SIGCHLD handler with waitpid(-1, ...), as shells and
// servers do, and leaves known blocks: KEPT blocks of KEPT_SIZE bytes that a global holds, and
// LOST blocks of LOST_SIZE bytes that nothing points to. Two threads wait on a pipe for ever,
// so that the exit scan stops threads, each of whose stops the kernel reports to the scanner
// with a SIGCHLD. Prints how many children it reaped.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

enum { CHILDREN = 3, KEPT = 5, KEPT_SIZE = 1000, LOST = 3, LOST_SIZE = 40 };

static volatile sig_atomic_t reaped;
static void *kept[KEPT];
static int never[2];

static void on_child(int sig) {
  (void)sig;
  int saved = errno, status;
  while (waitpid(-1, &status, WNOHANG) > 0) reaped++;
  errno = saved;
}

static void *wait_for_ever(void *arg) {
  (void)arg;
  char c;
  while (read(never[0], &c, 1) < 0 && errno == EINTR) {}
  return NULL;
}

__attribute__((noinline)) static void make_blocks(void) {
  for (int i = 0; i < KEPT; i++) kept[i] = malloc(KEPT_SIZE);
  for (int i = 0; i < LOST; i++) {
    void *volatile lost = malloc(LOST_SIZE);
    (void)lost;
  }
}

int main(void) {
  struct sigaction action = {0};
  action.sa_handler = on_child;
  action.sa_flags = SA_RESTART;
  sigaction(SIGCHLD, &action, NULL);
  // SIGCHLD is blocked between the checks and sigsuspend, so that no reaping is missed.
  sigset_t chld, old;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  sigprocmask(SIG_BLOCK, &chld, &old);
  for (int i = 0; i < CHILDREN; i++)
    if (fork() == 0) _exit(0);
  while (reaped < CHILDREN) sigsuspend(&old);
  sigprocmask(SIG_SETMASK, &old, NULL);
  if (pipe(never) != 0) return 2;
  pthread_t threads[2];
  for (int i = 0; i < 2; i++) pthread_create(&threads[i], NULL, wait_for_ever, NULL);
  make_blocks();
  printf("reaped %d\n", (int)reaped);
  return 0;
}
