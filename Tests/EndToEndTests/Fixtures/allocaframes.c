// Two call chains that put the function calling malloc at the same stack address: main calls
// a (a 4 KiB frame) -> b -> f1 -> f0, then c -> f1 -> f0, and f1 pads its alloca so that f0's
// frame lands where it was the first time. The first chain's return addresses still lie,
// untouched, in the second one's alloca area: only the saved rbp that f1's frame holds tells
// the chains apart. Three rounds of each, blocks of 1,111 bytes from the first chain and 2,222
// from the second, and after each of them one of 333 bytes from g; with an argument "apart",
// without g, so the two chains' allocations come one after the other. Prints "same N" with
// N = 1 when f0's frame was at the same place in both chains.
//   allocaframes [apart]
#include <alloca.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOINLINE __attribute__((noinline))
static char *volatile sink;
static void *volatile kept[64];
static int count, second;
static unsigned long f1_first, f0_first, f0_second;

NOINLINE void f0(size_t size) {
  unsigned long here = (unsigned long)__builtin_frame_address(0);
  if (second) f0_second = here;
  else f0_first = here;
  kept[count++] = malloc(size);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void f1(size_t size) {
  unsigned long here = (unsigned long)__builtin_frame_address(0);
  size_t pad = 64;
  if (second) pad += here - f1_first;
  else f1_first = here;
  char *p = alloca(pad);
  sink = p;
  f0(size);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void b(size_t size) {
  f1(size);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void a(size_t size) {
  volatile char big[4096];
  big[0] = 1;
  b(size);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void c(size_t size) {
  f1(size);
  __asm__ volatile("" ::: "memory");
}

NOINLINE void g(size_t size) {
  kept[count++] = malloc(size);
  __asm__ volatile("" ::: "memory");
}

int main(int argc, char **argv) {
  int apart = argc > 1 && strcmp(argv[1], "apart") == 0;
  void (*volatile chains[2])(size_t) = {a, c};
  static const size_t sizes[2] = {1111, 2222};
  for (int i = 0; i < 6; i++) {
    second = i & 1;
    chains[i & 1](sizes[i & 1]);
    if (!apart) g(333);
  }
  printf("same %d\n", f0_first == f0_second);
  for (int i = 0; i < count; i++) free(kept[i]);
  return 0;
}
