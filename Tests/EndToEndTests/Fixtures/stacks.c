// Known allocation stacks for the readable-stack tests: each function allocates a known number
// of blocks of a known size, and leaf_alloc is reached from two callers.
#include <stdlib.h>

static void *keep[64];

__attribute__((noinline)) void *leaf_alloc(size_t size) { return malloc(size); }

__attribute__((noinline)) void make_small(void) {
  for (int i = 0; i < 10; i++) keep[i] = leaf_alloc(48);
}

__attribute__((noinline)) void make_more(void) {
  for (int i = 0; i < 4; i++) keep[10 + i] = leaf_alloc(48);
}

__attribute__((noinline)) void make_big(void) {
  for (int i = 0; i < 3; i++) keep[20 + i] = malloc(1000);
}

// Each block is freed before anything else is allocated: 5 temporary allocations.
__attribute__((noinline)) void churn(void) {
  for (int i = 0; i < 5; i++) {
    void *p = malloc(200);
    free(p);
  }
}

int main(void) {
#ifdef PADDED
  // A rebuilt variant: code before the calls moves every function's address.
  volatile int pad[16] = {0};
  for (int i = 0; i < 16; i++) pad[i] += i;
#endif
  make_small();
  make_more();
  make_big();
  churn();
  return 0;
}
