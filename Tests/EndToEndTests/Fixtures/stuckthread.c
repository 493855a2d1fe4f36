// A thread that no stop can reach, and a big live heap. A worker starts a child with
// clone(CLONE_VM | CLONE_VFORK), as posix_spawn does, and the child sleeps: until it exits, the
// worker waits in the kernel where neither a signal nor ptrace can stop it. Main keeps NODES
// list nodes of NODE_SIZE bytes through a global, drops LOST blocks of LOST_SIZE bytes, writes
// its pid to the file named by argv[1] once the worker is stuck, and returns: the exit scan
// then has a thread that never stops. The child dies with the worker (PR_SET_PDEATHSIG) and
// sleeps at most 30 s.
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { NODES = 200000, NODE_SIZE = 48, LOST = 7, LOST_SIZE = 24 };

struct node {
  struct node *next;
  char payload[NODE_SIZE - sizeof(struct node *)];
};

static struct node *list;
static atomic_int child_running;
static char child_stack[64 * 1024] __attribute__((aligned(16)));

// Runs on its own stack in the worker's memory, while the worker waits: raw system calls only.
static int child(void *arg) {
  (void)arg;
  syscall(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0);
  atomic_store(&child_running, 1);
  struct timespec pause = {30, 0};
  syscall(SYS_nanosleep, &pause, NULL);
  return 0;
}

static void *worker(void *arg) {
  (void)arg;
  clone(child, child_stack + sizeof child_stack, CLONE_VM | CLONE_VFORK | SIGCHLD, NULL);
  return NULL;
}

__attribute__((noinline)) static void make_blocks(void) {
  for (int i = 0; i < NODES; i++) {
    struct node *n = malloc(sizeof *n);
    n->next = list;
    list = n;
  }
  for (int i = 0; i < LOST; i++) {
    void *volatile lost = malloc(LOST_SIZE);
    (void)lost;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  make_blocks();
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 2;
  while (!atomic_load(&child_running)) sched_yield();
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", argv[1]);
  FILE *f = fopen(tmp, "w");
  if (!f) return 2;
  fprintf(f, "%d\n", (int)getpid());
  fclose(f);
  rename(tmp, argv[1]);
  return 0;
}
