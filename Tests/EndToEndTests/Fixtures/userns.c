// Moves into a new user namespace with unshare(CLONE_NEWUSER), which the kernel allows only a
// process of one thread, and prints the result; then makes 100 blocks of 333 bytes and exits.
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  free(malloc(10));
  if (unshare(CLONE_NEWUSER) != 0) printf("unshare: %s\n", strerror(errno));
  else printf("unshare ok\n");
  for (int i = 0; i < 100; i++) malloc(333);
  return 0;
}
