// More distinct frames than the shim's stack table holds (2,097,152): code made at run time, as
// a JIT makes it, with a frame pointer, copied N times 32 bytes apart, each copy called once for
// a block of 16 bytes that is freed at once (and the last once more, for another function).
// Each copy's return address is a frame of its own.
//
//   lostframes N
//
// Before, one thread, and after, four at once, call a function of their own that allocates
// 16 MiB (a mapping, never touched) and frees it: its stack is stored before the table fills,
// and must be found whole after, by threads whose buffers never saw it.
//
// Prints "called N".
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *allocate(size_t size) { return malloc(size); }
static void *allocate_again(size_t size) { return malloc(size); }

__attribute__((noinline)) static void *known(void *arg) {
  void *p = malloc(16 << 20);
  __asm__ volatile("" : : "r"(p) : "memory");
  free(p);
  return arg;
}

static void in_threads(int count) {
  pthread_t threads[4];
  for (int i = 0; i < count; i++) pthread_create(&threads[i], NULL, known, NULL);
  for (int i = 0; i < count; i++) pthread_join(threads[i], NULL);
}

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 0;
  // push rbp; mov rbp, rsp; call rsi; pop rbp; ret (the size stays in rdi, the function to
  // call is the second argument)
  uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0xff, 0xd6, 0x5d, 0xc3};
  size_t bytes = ((size_t)n * 32 + 4095) & ~(size_t)4095;
  uint8_t *region = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) return 2;
  for (long i = 0; i < n; i++) memcpy(region + 32 * i, code, sizeof code);
  if (mprotect(region, bytes, PROT_READ | PROT_EXEC) != 0) return 3;
  in_threads(1);
  // The last copy is called once more, from the same place, for another function: its stack
  // shares the last one's frames down to the copy's, which did not fit
  typedef void *(*copy)(size_t, void *(*)(size_t));
  for (long i = 0; i <= n; i++)
    free(((copy)(region + 32 * (i < n ? i : n - 1)))(16, i < n ? allocate : allocate_again));
  in_threads(4);
  printf("called %ld\n", n);
  return 0;
}
