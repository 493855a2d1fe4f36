// A program whose leak verdicts memcheck and heaptrack referee (RefereeTests). Each case has a
// size of its own:
//   lost      7 blocks of 56 bytes, nothing points to them         definitely lost
//   list      5 nodes of 72 bytes, the head lost                    1 definitely, 4 indirectly
//   mapped    10 blocks of 88 bytes, pointed to only from an       still reachable
//             anonymous mapping that the program made itself
//   kept      1 block of 104 bytes, a global points to it          still reachable
// It also loads a library with dlopen, whose loader keeps blocks of its own (not leaks).
// `referee clean` loses nothing: it makes the same blocks, but keeps the lost and listed ones
// in a global array (so that the heap, and the loader's blocks, lie as in a leaky run), then
// keeps 1 block of 120 bytes only through a pointer 16 bytes into it: possibly lost.
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static void *kept;
static void *held[8], **sink;  // `clean`: where lost and listed blocks are kept instead
static char *interior;

__attribute__((noinline)) static void leak_lost(void) {
  for (int i = 0; i < 7; i++) {
    void *block = memset(malloc(56), 1, 56);
    if (sink) *sink++ = block;
  }
}

__attribute__((noinline)) static void leak_list(void) {
  void **head = NULL;
  for (int i = 0; i < 5; i++) {
    void **node = malloc(72);
    memset(node, 0, 72);
    node[0] = head;
    head = node;
  }
  if (sink) *sink++ = head;
}

// The region's address is forgotten too: only the mapping holds the blocks.
__attribute__((noinline)) static void keep_in_mapping(void) {
  void **region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (region == MAP_FAILED) exit(3);
  for (int i = 0; i < 10; i++) region[i * 3] = malloc(88);
}

__attribute__((noinline)) static void keep_in_global(void) { kept = malloc(104); }

__attribute__((noinline)) static void keep_interior(void) { interior = (char *)malloc(120) + 16; }

// Zeroes the dead stack below main, where the functions above left their pointers.
__attribute__((noinline)) static void clobber(void) {
  volatile char area[16384];
  memset((char *)area, 0, sizeof area);
}

int main(int argc, char **argv) {
  int clean = argc > 1 && strcmp(argv[1], "clean") == 0;
  if (clean) sink = held;
  leak_lost();
  leak_list();
  keep_in_mapping();
  keep_in_global();
  if (!dlopen("libresolv.so.2", RTLD_NOW)) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 4;
  }
  if (clean) keep_interior();
  clobber();
  puts("done");
  return 0;
}
