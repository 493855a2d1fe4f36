// Words that Swift's pointer encodings would read as pointers, in a C program, which memcheck
// reads as plain addresses:
//   three blocks (102, 103 and 105 B) held only through words with their top bits set, and one
//   (77 B) only through a word shaped as a Swift side table's reference ((p >> 3) | 3 << 62):
//   all four definitely lost;
//   a block (16 B) held through a plain pointer from a kept block whose address it holds in its
//   second word as a side table's reference: reachable.
#include <stdint.h>
#include <stdlib.h>

uintptr_t tagged[4];
void **kept;

int main(void) {
  tagged[0] = (uintptr_t)malloc(102) | 1ull << 63;
  tagged[1] = (uintptr_t)malloc(103) | 0xffull << 56;
  tagged[2] = (uintptr_t)malloc(105) | 0xfull << 60;
  tagged[3] = (uintptr_t)malloc(77) >> 3 | 3ull << 62;
  kept = malloc(16);
  uintptr_t *held = malloc(16);
  kept[0] = held;
  kept[1] = NULL;
  held[0] = 0;
  held[1] = (uintptr_t)kept >> 3 | 3ull << 62;
  return 0;
}
