// A library built twice with frames of different sizes but the same code layout (FRAME is 200
// or 4,000 bytes, both a 32-bit immediate), so the second build, loaded where the first was
// unloaded, has the first one's return addresses with other unwind rules. plugin_make makes
// 100 blocks of 3,000 bytes from inside a frame of FRAME bytes, and keeps them.
#include <stdlib.h>

#ifndef FRAME
#define FRAME 200
#endif

void *kept[100];

__attribute__((noinline)) static void *inside(int i) {
  volatile char frame[FRAME];
  frame[i % 7] = (char)i;
  void *p = malloc(3000);
  frame[0] = frame[i % 7];
  return p;
}

void plugin_make(void) {
  for (int i = 0; i < 100; i++) kept[i] = inside(i);
}
