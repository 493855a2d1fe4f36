// Calls what the kernel allows only a process of one thread, and prints each result: joins its
// own mount namespace (setns), unshares its signal handlers (CLONE_SIGHAND), and moves into a
// new user namespace (unshare(CLONE_NEWUSER)); then makes 100 blocks of 333 bytes and exits.
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
  free(malloc(10));
  int mounts = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
  printf("setns: %s\n", setns(mounts, CLONE_NEWNS) == 0 ? "ok" : strerror(errno));
  printf("unshare(CLONE_SIGHAND): %s\n", unshare(CLONE_SIGHAND) == 0 ? "ok" : strerror(errno));
  if (unshare(CLONE_NEWUSER) != 0) printf("unshare: %s\n", strerror(errno));
  else printf("unshare ok\n");
  for (int i = 0; i < 100; i++) malloc(333);
  return 0;
}
