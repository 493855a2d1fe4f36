// Takes a page with sbrk itself, as old and custom allocators do, past glibc's heap, and keeps
// there the only pointer to a block of 552 bytes from make_block: reachable, as memcheck says.
// A second block of 552 bytes is dropped: lost.
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) static void *make_block(void) { return malloc(552); }

int main(void) {
  void *volatile dropped = make_block();
  void **region = sbrk(4096);
  if (region == (void *)-1) return 1;
  region[0] = make_block();
  region = NULL;
  dropped = NULL;
  return 0;
}
