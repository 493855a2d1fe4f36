// The leak-check benchmark's workload: 2,000,000 blocks of 100 bytes (about 200 MB), linked in
// 2,000 lists of 1,000 that globals hold, and 1,000 more blocks of 100 bytes that nothing holds
// (100,000 bytes lost), made in between the others. Then it exits, and the tool under test
// checks for leaks at exit. With LEAKBENCH_CHECK set, it first checks once from inside, through
// whichever tool is there, and prints how long that check alone took.
//   leakbench [LISTS NODES LEAKS]
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#endif

int __lsan_do_recoverable_leak_check(void) __attribute__((weak));  // LeakSanitizer's, if linked

struct node {
  struct node *next;
  uint64_t payload[11];
  uint32_t tail;  // 100 bytes in all
} __attribute__((packed));

struct node **volatile heads;  // a global the program keeps: the lists are reachable

// Makes one leaked block. Its address is overwritten before it returns, and it calls nothing
// after malloc (a call would leave a copy of the address in a dead frame, below the stack
// pointer, which LeakSanitizer then finds).
__attribute__((noinline)) static void leak_one(void) {
  struct node *volatile lost = malloc(sizeof(struct node));
  lost->next = NULL;
  lost->payload[0] = 0x1111;
  lost = NULL;
}

// Zeroes the dead stack below main, where the leaking calls left their frames.
__attribute__((noinline)) static void clobber(void) {
  volatile char area[16384];
  memset((char *)area, 0, sizeof area);
}

// One leak check, timed: the scan alone, without the rest of the exit. Heapline's API is looked
// up at run time (the preload library brings it); LeakSanitizer prints its own report.
static void timed_check(void) {
  struct {
    uint64_t scan, lost_blocks, lost_bytes, possibly_lost_blocks, possibly_lost_bytes;
  } found = {0};
  int (*heapline)(void *) = (int (*)(void *))dlsym(RTLD_DEFAULT, "heapline_check_leaks");
  const char *tool = "none";
  struct timespec start, end;
  clock_gettime(CLOCK_MONOTONIC, &start);
  if (heapline) {
    heapline(&found);
    tool = "heapline";
  } else if (__lsan_do_recoverable_leak_check) {
    __lsan_do_recoverable_leak_check();
    tool = "lsan";
#ifdef VALGRIND_DO_LEAK_CHECK
  } else if (RUNNING_ON_VALGRIND) {
    VALGRIND_DO_LEAK_CHECK;
    unsigned long leaked = 0, dubious = 0, reachable = 0, suppressed = 0;
    VALGRIND_COUNT_LEAK_BLOCKS(leaked, dubious, reachable, suppressed);
    found.lost_blocks = leaked;
    VALGRIND_COUNT_LEAKS(leaked, dubious, reachable, suppressed);
    found.lost_bytes = leaked;
    (void)dubious, (void)reachable, (void)suppressed;
    tool = "valgrind";
#endif
  }
  clock_gettime(CLOCK_MONOTONIC, &end);
  double seconds = (double)(end.tv_sec - start.tv_sec) + (end.tv_nsec - start.tv_nsec) / 1e9;
  printf("timed check (%s): %.6f s, %llu blocks, %llu bytes lost\n", tool, seconds,
         (unsigned long long)found.lost_blocks, (unsigned long long)found.lost_bytes);
  fflush(stdout);
}

int main(int argc, char **argv) {
  long lists = argc > 1 ? atol(argv[1]) : 2000, nodes = argc > 2 ? atol(argv[2]) : 1000;
  long leaks = argc > 3 ? atol(argv[3]) : 1000;
  heads = calloc((size_t)lists, sizeof *heads);
  long every = leaks ? lists * nodes / leaks : 0, made = 0;
  for (long l = 0; l < lists; l++) {
    for (long n = 0; n < nodes; n++) {
      struct node *node = malloc(sizeof *node);
      node->next = heads[l];
      node->payload[0] = (uint64_t)n;
      heads[l] = node;
      if (every && ++made % every == 0) leak_one();
    }
  }
  clobber();
  if (getenv("LEAKBENCH_CHECK")) timed_check();
  printf("%ld blocks of %zu bytes in %ld lists, %ld leaked\n", lists * nodes, sizeof(struct node),
         lists, leaks);
  return 0;
}
