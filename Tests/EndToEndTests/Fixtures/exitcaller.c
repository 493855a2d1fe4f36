// Who called exit decides which frames are live at the scan at exit (LeakRootTests). Each mode
// first leaks 4 blocks of 72 bytes that nothing points to; the mode is argv[1]:
//   deep     work() holds 3 blocks of 232 bytes in its locals and calls exit(0) from a callee:
//            its frame is live, they are reachable
//   main     main holds 2 blocks of 120 bytes in its locals and calls exit(0): reachable
//   return   main holds 2 blocks of 120 bytes in its locals and returns 0: its frame is gone,
//            they are lost
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) static void leak(void) {
  for (int i = 0; i < 4; i++) {
    void *volatile lost = malloc(72);
    (void)lost;
  }
}

// Leaves no copy of leak()'s pointers in the frames below.
__attribute__((noinline)) static void clobber(void) {
  volatile char area[4096];
  memset((char *)area, 0, sizeof area);
}

__attribute__((noinline)) static void leave(int status) { exit(status); }

__attribute__((noinline)) static void work(void) {
  void *volatile held[3];
  for (int i = 0; i < 3; i++) held[i] = malloc(232);
  leave(0);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  leak();
  clobber();
  if (!strcmp(argv[1], "deep")) work();
  void *volatile held[2];
  for (int i = 0; i < 2; i++) held[i] = malloc(120);
  if (!strcmp(argv[1], "main")) exit(0);
  return strcmp(argv[1], "return") ? 2 : 0;
}
