// Sleeps BEFORE_MS (argv[3], 150 by default), touches a block of BYTES (argv[1]) for 20 ms and
// frees it, then sleeps AFTER_MS (argv[2]) before it exits: a peak of RSS that comes and goes
// between two of the shim's samples, 100 ms apart, or just before the end or a rotation. Prints
// "peak KB", its VmHWM, as the last thing it does.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void sleep_ms(long ms) {
  struct timespec pause = {ms / 1000, ms % 1000 * 1000000};
  while (nanosleep(&pause, &pause) != 0) {
  }
}

static long peak_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

int main(int argc, char **argv) {
  size_t bytes = argc > 1 ? (size_t)atol(argv[1]) : 50000000;
  long after = argc > 2 ? atol(argv[2]) : 250;
  sleep_ms(argc > 3 ? atol(argv[3]) : 150);  // past the first samples
  char *block = malloc(bytes);
  if (!block) return 1;
  memset(block, 1, bytes);
  sleep_ms(20);
  free(block);
  sleep_ms(after);
  printf("peak %ld\n", peak_kb());
  return 0;
}
