// Every member of the malloc family, each with a size the test knows.
#include <malloc.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  // A realloc chain: 100 -> 200 -> 400 -> 50 bytes. One block stays, of 50 bytes.
  char *p = malloc(100);
  p = realloc(p, 200);
  p = realloc(p, 400);
  p = realloc(p, 50);
  // calloc: 10 x 24 = 240 bytes, live.
  void *c = calloc(10, 24);
  // Aligned: 3 blocks of 1000 bytes, live.
  void *a = aligned_alloc(64, 1000);
  void *m = memalign(128, 1000);
  void *pm = NULL;
  if (posix_memalign(&pm, 256, 1000) != 0) return 1;
  // valloc 5000 bytes, freed. reallocarray 8 x 16 = 128 bytes, live.
  free(valloc(5000));
  void *ra = reallocarray(NULL, 8, 16);
  // realloc(p, 0) frees; realloc(NULL, n) allocates 77 bytes, live.
  void *z = malloc(33);
  z = realloc(z, 0);
  void *n = realloc(NULL, 77);
  // Failures are not allocations: posix_memalign with a bad alignment.
  void *bad = NULL;
  if (posix_memalign(&bad, 3, 10) == 0) return 2;
  memset(p, 1, 50);
  (void)c; (void)a; (void)m; (void)ra; (void)z; (void)n;
  return 0;
}
