// A thread on a stack of 16 KiB (below it, an unreadable guard page) recurses until SLACK bytes
// of its stack are left, then allocates 24 bytes from a call site that has never allocated, and
// prints "ok".
//   smallstack SLACK
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

enum { STACK = 16384, PAGE = 4096 };
static char *stack_low;
static size_t slack;
void *volatile kept;

static __attribute__((noinline)) int descend(int depth) {
  volatile char pad[64];
  pad[0] = (char)depth;
  char here;
  if ((size_t)(&here - stack_low) > slack) return descend(depth + 1) + pad[0];
  kept = malloc(24);
  return pad[0];
}

static void *thread_main(void *unused) {
  (void)unused;
  descend(0);
  return NULL;
}

int main(int argc, char **argv) {
  slack = argc > 1 ? strtoul(argv[1], NULL, 0) : 4096;
  char *map = mmap(NULL, STACK + PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (map == MAP_FAILED || mprotect(map, PAGE, PROT_NONE) != 0) return 2;
  stack_low = map + PAGE;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstack(&attr, stack_low, STACK);
  pthread_t thread;
  if (pthread_create(&thread, &attr, thread_main, NULL) != 0) return 3;
  pthread_join(thread, NULL);
  printf("ok\n");
  return 0;
}
