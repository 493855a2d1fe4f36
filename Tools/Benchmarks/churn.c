// Allocation churn for the tracer benchmark (run.sh): PAIRS malloc/free pairs, split over
// THREADS threads, each malloc made DEPTH recursive calls below the thread's entry.
//
//   churn PAIRS THREADS DEPTH
//
// What makes it a fair test of a tracer rather than of the allocator:
// - Every malloc has DEPTH + 5 of our own frames above it, plus libc's start-up frames, so the
//   unwinder does the work it does in real programs: 20 callers (18 on a second thread) with
//   DEPTH 12.
// - Each block lives for a while in a ring before it is freed, so the tracer's live table holds
//   a few hundred blocks and the free is not always of the block just allocated.
// - A handful of distinct stacks (3 entry paths x 4 leaves) rather than one, as a loop over
//   mixed work would give, while still far fewer stacks than events.
// - Sizes span several malloc size classes (tcache bins and a larger one).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { RING = 256 };

struct worker {
  long pairs;
  int depth;
  unsigned long checksum;
};

// Written after every recursive call so that the compiler cannot turn the recursion into a
// loop or a tail call: each level must keep its frame on the stack, as real code does. Per
// thread: one shared line, written at every level by both threads, made the untraced two-thread
// run twice as slow and its time vary by 60% from run to run.
static __thread volatile unsigned long sink;

#define NOINLINE __attribute__((noinline))

NOINLINE static void *leaf_small(long i) { return malloc(16 + (size_t)(i & 3) * 8); }
NOINLINE static void *leaf_medium(long i) { return malloc(48 + (size_t)(i & 7) * 8); }
NOINLINE static void *leaf_large(long i) { return malloc(256 + (size_t)(i & 1) * 256); }
NOINLINE static void *leaf_page(long i) { return malloc(4096 - 16 * (size_t)(i & 1)); }

NOINLINE static void *descend(int depth, long i) {
  if (depth == 0) {
    void *p;
    switch (i & 7) {  // mostly small blocks, as in most programs
    case 0: case 1: case 2: case 3: p = leaf_small(i); break;
    case 4: case 5: p = leaf_medium(i); break;
    case 6: p = leaf_large(i); break;
    default: p = leaf_page(i); break;
    }
    if (p) memset(p, (int)i, 16);  // touch it: an untouched block could be optimized away
    return p;
  }
  void *p = descend(depth - 1, i);
  sink += (unsigned long)depth;
  return p;
}

// Three call sites into the same recursion, so stacks differ near the root as well.
NOINLINE static void *path_a(int depth, long i) { void *p = descend(depth, i); sink++; return p; }
NOINLINE static void *path_b(int depth, long i) { void *p = descend(depth, i); sink++; return p; }
NOINLINE static void *path_c(int depth, long i) { void *p = descend(depth, i); sink++; return p; }

static void *run(void *arg) {
  struct worker *w = arg;
  void *ring[RING] = {0};
  unsigned long sum = 0;
  for (long i = 0; i < w->pairs; i++) {
    void **slot = &ring[i % RING];
    free(*slot);
    long path = (i / RING) % 3;  // switch paths every ring turn, as phases of a program do
    *slot = path == 0 ? path_a(w->depth, i) : path == 1 ? path_b(w->depth, i)
                                                        : path_c(w->depth, i);
    sum += *(unsigned char *)*slot;
  }
  for (int k = 0; k < RING; k++) free(ring[k]);
  w->checksum = sum;
  return NULL;
}

int main(int argc, char **argv) {
  long pairs = argc > 1 ? atol(argv[1]) : 3000000;
  int threads = argc > 2 ? atoi(argv[2]) : 1;
  int depth = argc > 3 ? atoi(argv[3]) : 12;
  if (pairs <= 0 || threads < 1 || threads > 64 || depth < 0) {
    fprintf(stderr, "usage: churn PAIRS THREADS DEPTH\n");
    return 2;
  }
  struct worker w[64];
  pthread_t tids[64];
  for (int t = 0; t < threads; t++)
    w[t] = (struct worker){.pairs = pairs / threads + (t < pairs % threads), .depth = depth};
  if (threads == 1) {
    run(&w[0]);  // on the main thread, as a single-threaded program would
  } else {
    for (int t = 0; t < threads; t++)
      if (pthread_create(&tids[t], NULL, run, &w[t]) != 0) return 1;
    for (int t = 0; t < threads; t++) pthread_join(tids[t], NULL);
  }
  unsigned long sum = 0;
  for (int t = 0; t < threads; t++) sum += w[t].checksum;
  printf("%ld pairs, %d threads, checksum %lu\n", pairs, threads, sum);
  return 0;
}
