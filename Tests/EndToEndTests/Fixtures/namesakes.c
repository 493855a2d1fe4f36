// A program whose own functions have the names of the shim's internal ones, exported (the test
// links it -rdynamic). An executable's exported symbols come first in the dynamic lookup, before
// any preloaded library's, so a shim that exported its internals would call these instead: its
// clock would stand still, its tables would get no memory and its messages would go to the
// program's stdout.
//
//   namesakes N    makes and frees N blocks of 40 bytes, then prints one line
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

uint64_t hl_now(void) { return 7; }
void *hl_map(size_t bytes) { (void)bytes; return NULL; }
void hl_log(const char *message, const char *detail) {
  printf("the program's hl_log: %s%s\n", message, detail ? detail : "");
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 100;
  void **blocks = calloc((size_t)n, sizeof *blocks);
  for (int i = 0; i < n; i++) blocks[i] = malloc(40);
  for (int i = 0; i < n; i++) free(blocks[i]);
  free(blocks);
  printf("made and freed %d blocks of 40 bytes; hl_now says %lu\n", n, (unsigned long)hl_now());
  return 0;
}
