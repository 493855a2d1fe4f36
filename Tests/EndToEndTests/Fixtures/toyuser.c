// A program that allocates with toyalloc.c's allocator, linked in: 1,000 blocks of 100 bytes,
// their usable sizes, an aligned block (not with argument "unaligned", for an allocator that
// has none), a grown one, and their frees; then prints how many blocks the allocator handed
// out since main began, and the usable sizes' sum.
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

unsigned long toy_served(void);

int main(int argc, char **argv) {
  int aligning = argc < 2 || strcmp(argv[1], "unaligned") != 0;
  unsigned long before = toy_served();
  void *blocks[1000];
  size_t usable = 0;
  for (int i = 0; i < 1000; i++) usable += malloc_usable_size(blocks[i] = malloc(100));
  void *aligned = NULL;
  if (aligning && posix_memalign(&aligned, 4096, 100) != 0) return 1;
  void *grown = realloc(calloc(10, 10), 1000);
  for (int i = 0; i < 1000; i++) free(blocks[i]);
  free(aligned);
  free(grown);
  printf("served %lu, usable %zu\n", toy_served() - before, usable);
  return 0;
}
