// A program with an allocator of its own: it defines malloc, free, calloc and realloc itself (a
// bump allocator over a static arena), so the process's malloc is never the preload library's.
// Makes and frees 1,000 blocks and prints "done".
#include <stddef.h>
#include <stdio.h>
#include <string.h>

static char arena[1 << 24];
static size_t used;

void *malloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (n > sizeof arena - used) return NULL;
  void *p = arena + used;
  used += n;
  return p;
}

void free(void *p) { (void)p; }

void *calloc(size_t count, size_t size) {
  void *p = malloc(count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *realloc(void *p, size_t n) {
  void *q = malloc(n);
  if (p && q) memcpy(q, p, n);  // the arena is all readable: copying n bytes is safe
  return q;
}

int main(void) {
  for (int i = 0; i < 1000; i++) free(malloc(100));
  printf("done\n");
  return 0;
}
