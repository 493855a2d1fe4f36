// More named scopes than the shim has room for names (4,096): scope "s0" to "sN-1", each with
// one block of 40 bytes made in it and kept. The C API is looked up with dlsym: without the
// shim preloaded, every block is made all the same.
//
//   manyscopes N
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

typedef uint32_t (*push_fn)(const char *);
typedef void (*pop_fn)(uint32_t);

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4200;
  push_fn push = (push_fn)dlsym(RTLD_DEFAULT, "heapline_scope_push");
  pop_fn pop = (pop_fn)dlsym(RTLD_DEFAULT, "heapline_scope_pop");
  void **kept = calloc((size_t)n, sizeof *kept);
  for (int i = 0; i < n; i++) {
    char name[16];
    snprintf(name, sizeof name, "s%d", i);
    uint32_t token = push ? push(name) : 0;
    kept[i] = malloc(40);
    if (pop) pop(token);
  }
  printf("made %d blocks in %d scopes\n", n, n);
  return kept[n - 1] ? 0 : 1;
}
