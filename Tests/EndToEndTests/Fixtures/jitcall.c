// Code made at run time, as a JIT makes it (in an anonymous mapping, no module's, with no CFI),
// that keeps a frame pointer and calls malloc: main calls it 100 times for 48 bytes, keeps the
// blocks, and prints "ok".
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *kept[100];

int main(void) {
  // push rbp; mov rbp, rsp; mov rax, malloc; call rax; pop rbp; ret (the size stays in rdi)
  uint8_t code[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xd0,
                    0x5d, 0xc3};
  void *(*target)(size_t) = malloc;
  memcpy(code + 6, &target, sizeof target);
  uint8_t *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return 2;
  memcpy(page, code, sizeof code);
  if (mprotect(page, 4096, PROT_READ | PROT_EXEC) != 0) return 3;
  void *(*made)(size_t) = (void *(*)(size_t))page;
  for (int i = 0; i < 100; i++) kept[i] = made(48);
  printf("ok\n");
  return 0;
}
