// Ground truth for the end-to-end tests: allocates N blocks of S bytes from make_blocks(),
// frees the first K of them, prints a line and exits with the status it is given.
//   blocks N S K STATUS
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) void **make_blocks(long n, long size) {
  void **blocks = calloc((size_t)n, sizeof *blocks);  // one calloc of n pointers
  for (long i = 0; i < n; i++) blocks[i] = malloc((size_t)size);  // BLOCKS_MALLOC_LINE
  return blocks;
}

__attribute__((noinline)) void free_blocks(void **blocks, long k) {
  for (long i = 0; i < k; i++) free(blocks[i]);
}

int main(int argc, char **argv) {
  if (argc != 5) return 100;
  long n = atol(argv[1]), size = atol(argv[2]), k = atol(argv[3]);
  void **blocks = make_blocks(n, size);
  free_blocks(blocks, k);
  char line[128];
  if (fgets(line, sizeof line, stdin)) printf("stdin said: %s", line);
  printf("made %ld blocks of %ld bytes, freed %ld\n", n, size, k);
  fflush(stdout);
  return atoi(argv[4]);
}
