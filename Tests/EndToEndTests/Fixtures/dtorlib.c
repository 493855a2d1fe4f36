// A library whose constructor keeps a block of 222 bytes in a global and registers an exit
// handler (on_exit, with no library handle) that makes a block of 300 bytes and keeps it in a
// global; its destructor frees the 222 bytes and drops a block of 111 bytes that it makes (a
// leak). Built as a shared library.
#include <stdlib.h>
#include <string.h>

void *dtorlib_kept, *dtorlib_at_exit;

static void at_exit(int status, void *unused) {
  (void)status;
  (void)unused;
  dtorlib_at_exit = malloc(300);
}

__attribute__((constructor)) static void made(void) {
  dtorlib_kept = malloc(222);
  on_exit(at_exit, NULL);
}

__attribute__((destructor)) static void unmade(void) {
  char *dropped = malloc(111);
  memset(dropped, 1, 111);
  free(dtorlib_kept);
  dtorlib_kept = NULL;
}
