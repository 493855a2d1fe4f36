// A block of 1 MiB, a mapping of its own, holds the only pointer to a block of 100 bytes
// (from make_victim) at offset 2000; realloc then shrinks it in place to 64 bytes, which glibc
// does with mremap: the 100 bytes are lost. Prints "usable U": the shrunk block's usable size,
// past 2008 when its old words are still there to be read.
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void *volatile keep;

__attribute__((noinline)) static void *make_victim(void) {
  void *victim = malloc(100);
  memset(victim, 0x22, 100);
  return victim;
}

int main(void) {
  char *big = malloc(1 << 20);
  memset(big, 0x11, 1 << 20);
  void *victim = make_victim();
  memcpy(big + 2000, &victim, sizeof victim);
  victim = NULL;
  keep = big = realloc(big, 64);
  printf("usable %zu\n", malloc_usable_size(big));
  return 0;
}
