// Blocks holding a page the program made unreadable (mprotect PROT_NONE), as a guard page:
//   a block of 1 MiB (a mapping of its own) and one of 100,000 B (in glibc's heap), each kept
//   in a global, each the only holder of a block behind its guard page (907 B and 911 B) and
//   of one before it (905 B and 909 B): all reachable;
//   a block of 1 MiB with a guard page, dropped: definitely lost.
#include <stdlib.h>
#include <sys/mman.h>

void *kept_big, *kept_heap;

static char *guarded(size_t size, size_t before, size_t after, size_t a, size_t b) {
  char *block = malloc(size);
  *(void **)(block + before) = malloc(a);
  *(void **)(block + after) = malloc(b);
  mprotect((void *)(((unsigned long)block + 8192) & ~4095UL), 4096, PROT_NONE);
  return block;
}

int main(void) {
  kept_big = guarded(1 << 20, 4096, 600000, 905, 907);
  kept_heap = guarded(100000, 4096, 90000, 909, 911);
  char *dropped = malloc(1 << 20);
  mprotect((void *)(((unsigned long)dropped + 8192) & ~4095UL), 4096, PROT_NONE);
  dropped = NULL;
  return 0;
}
