// Starts THREADS threads (argv[1]) that all live at once, as a server's pool does; each makes
// PAIRS allocations (argv[2]) of 24 to 520 bytes from pool_work, kept in a ring of 64 and freed
// in a shuffled order, so that its records do not shrink to a byte or two. Once every thread has
// done its part and while all are still alive, prints "peak KB": the process's VmHWM.
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_barrier_t done;
static long pairs;

static long peak_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

__attribute__((noinline)) static void *pool_work(void *arg) {
  uint64_t x = (uintptr_t)arg * 0x9E3779B97F4A7C15ull + 1;
  void *ring[64] = {0};
  for (long i = 0; i < pairs; i++) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    unsigned slot = (unsigned)(x % 64);
    free(ring[slot]);
    ring[slot] = malloc(24 + 16 * (size_t)(x >> 40 & 31));
  }
  for (int i = 0; i < 64; i++) free(ring[i]);
  pthread_barrier_wait(&done);  // all alive until every thread is done
  pthread_barrier_wait(&done);  // and while main reads the peak
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 300;
  pairs = argc > 2 ? atol(argv[2]) : 60000;
  pthread_barrier_init(&done, NULL, (unsigned)threads + 1);
  pthread_t *ids = calloc((size_t)threads, sizeof *ids);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < threads; i++)
    if (pthread_create(&ids[i], &attr, pool_work, (void *)(uintptr_t)(i + 1)) != 0) return 1;
  pthread_barrier_wait(&done);
  printf("peak %ld\n", peak_kb());
  fflush(stdout);
  pthread_barrier_wait(&done);
  for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
  free(ids);
  return 0;
}
