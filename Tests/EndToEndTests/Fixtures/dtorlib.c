// A library whose constructor keeps a block of 222 bytes in a global, and whose destructor
// frees it and drops a block of 111 bytes that it makes (a leak). Built as a shared library.
#include <stdlib.h>
#include <string.h>

void *dtorlib_kept;

__attribute__((constructor)) static void made(void) { dtorlib_kept = malloc(222); }

__attribute__((destructor)) static void unmade(void) {
  char *dropped = malloc(111);
  memset(dropped, 1, 111);
  free(dtorlib_kept);
  dtorlib_kept = NULL;
}
