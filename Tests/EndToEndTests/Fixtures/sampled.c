// Ground truth for sampling mode: three functions allocate blocks of one size each, S bytes C
// times, freeing as they go and keeping their last KEEP blocks live. Without stdio (whose buffer
// is an allocation of its own), it writes one line: the usable bytes of the blocks it keeps.
//   sampled SMALL_COUNT MEDIUM_COUNT LARGE_COUNT
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { KEEP = 16, SMALL = 64, MEDIUM = 4000, LARGE = 200 * 1024 };

static void *kept[3][KEEP];

static void churn(void **ring, long count, size_t size) {
  for (long i = 0; i < count; i++) {
    void *p = malloc(size);
    *(volatile char *)p = 1;
    free(ring[i % KEEP]);  // free(NULL) for the first KEEP: not a call the shim counts
    ring[i % KEEP] = p;
  }
}

__attribute__((noinline)) void small_blocks(long count) { churn(kept[0], count, SMALL); }
__attribute__((noinline)) void medium_blocks(long count) { churn(kept[1], count, MEDIUM); }
__attribute__((noinline)) void large_blocks(long count) { churn(kept[2], count, LARGE); }

int main(int argc, char **argv) {
  if (argc != 4) return 100;
  small_blocks(atol(argv[1]));
  medium_blocks(atol(argv[2]));
  large_blocks(atol(argv[3]));
  unsigned long usable = 0;
  for (int s = 0; s < 3; s++)
    for (int i = 0; i < KEEP; i++) usable += kept[s][i] ? malloc_usable_size(kept[s][i]) : 0;
  char line[64];
  int n = snprintf(line, sizeof line, "live usable %lu\n", usable);
  return write(1, line, (size_t)n) == n ? 0 : 1;
}
