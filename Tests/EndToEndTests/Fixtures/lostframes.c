// More distinct frames than the shim's stack table holds (2,097,152): code made at run time, as
// a JIT makes it, with a frame pointer, copied N times 32 bytes apart, each copy called once for
// a block of 16 bytes that is freed at once. Each copy's return address is a frame of its own.
//
//   lostframes N
//
// Prints "called N".
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *allocate(size_t size) { return malloc(size); }

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  // push rbp; mov rbp, rsp; mov rax, allocate; call rax; pop rbp; ret (the size stays in rdi)
  uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0,
                    0x5d, 0xc3};
  void *(*target)(size_t) = allocate;
  memcpy(code + 6, &target, sizeof target);
  size_t bytes = ((size_t)n * 32 + 4095) & ~(size_t)4095;
  uint8_t *region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return 2;
  for (long i = 0; i < n; i++) memcpy(region + 32 * i, code, sizeof code);
  if (mprotect(region, bytes, PROT_READ | PROT_EXEC) != 0) return 3;
  for (long i = 0; i < n; i++) free(((void *(*)(size_t))(region + 32 * i))(16));
  printf("called %ld\n", n);
  return 0;
}
