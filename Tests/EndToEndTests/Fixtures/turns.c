// Three paths take turns to reach one call of malloc at the same depth: main calls outer1,
// outer2 and outer3 in turn, each calls mid, which calls get, which allocates 40 bytes. The
// stacks differ only three frames out from malloc, at the same stack pointer, so a stack must be
// known by all of its frames, not by where it starts. Each path makes COUNT blocks, freed at once.
//   turns COUNT
#include <stdlib.h>

static void *volatile sink;
static volatile int path;

__attribute__((noinline)) static void *get(void) {
  void *p = malloc(40);
  sink = p;
  return p;
}

__attribute__((noinline)) static void *mid(void) {
  void *p = get();
  sink = p;
  return p;
}

__attribute__((noinline)) static void *outer1(void) {
  void *p = mid();
  path = 1;  // each its own code, which the compiler cannot fold into one
  return p;
}

__attribute__((noinline)) static void *outer2(void) {
  void *p = mid();
  path = 2;  // each its own code, which the compiler cannot fold into one
  return p;
}

__attribute__((noinline)) static void *outer3(void) {
  void *p = mid();
  path = 3;  // each its own code, which the compiler cannot fold into one
  return p;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000;
  for (long i = 0; i < 3 * count; i++) {
    void *p = i % 3 == 0 ? outer1() : i % 3 == 1 ? outer2() : outer3();
    free(p);
  }
  return 0;
}
