// Ground truth for the clock test: at 0 ms, then after each of the waits it is given (in ms),
// allocates a block of 7,000 + i bytes between two reads of CLOCK_MONOTONIC and prints both
// readings, so that the block's time in the trace can be checked against the kernel's clock.
//   clocked MS...
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static unsigned long long monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

int main(int argc, char **argv) {
  for (int i = 0; i < argc; i++) {
    if (i > 0) {
      long ms = atol(argv[i]);
      struct timespec wait = {ms / 1000, (ms % 1000) * 1000000};
      nanosleep(&wait, NULL);
    }
    unsigned long long before = monotonic();
    void *volatile p = malloc(7000 + (size_t)i);
    unsigned long long after = monotonic();
    printf("%d %llu %llu\n", i, before, after);
    free(p);
  }
  return 0;
}
