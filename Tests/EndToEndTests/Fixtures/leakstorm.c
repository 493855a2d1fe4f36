// A storm of leak-scan requests: keeps 1,000 blocks of 64 bytes, raises SIGUSR1 (recorded with
// --leaks-signal 10) 2,000 times 100 µs apart, frees the blocks and prints "sent 2000".
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(void) {
  static void *keep[1000];
  for (int i = 0; i < 1000; i++) keep[i] = malloc(64);
  int sent = 0;
  for (; sent < 2000; sent++) {
    raise(SIGUSR1);
    struct timespec pause = {0, 100 * 1000};
    nanosleep(&pause, NULL);
  }
  for (int i = 0; i < 1000; i++) free(keep[i]);
  printf("sent %d\n", sent);
  return 0;
}
