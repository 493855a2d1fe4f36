// Ground truth for event times: THREADS threads (1 or 2) each make and free 64-byte blocks
// without pause for MS milliseconds, and every 1,000th time make a marker block of
// 100,000 + 10,000 × thread + k bytes between two readings of CLOCK_MONOTONIC. At the end, one
// line per marker: "SIZE BEFORE AFTER START", START being when all threads were running.
//   ticking THREADS MS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MARKERS = 5000 };
static unsigned long long readings[2][MARKERS][2];
static int counts[2];
static long duration_ms;
static unsigned long long started;
static pthread_barrier_t barrier;

static unsigned long long monotonic(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void *run(void *arg) {
  int thread = (int)(long)arg;
  pthread_barrier_wait(&barrier);
  if (thread == 0) started = monotonic();
  unsigned long long end = monotonic() + (unsigned long long)duration_ms * 1000000ull;
  for (long i = 0; counts[thread] < MARKERS; i++) {
    void *volatile p = malloc(64);
    free(p);
    if (i % 1000 != 0) continue;
    unsigned long long before = monotonic();
    void *volatile marker = malloc(100000 + 10000 * (size_t)thread + (size_t)counts[thread]);
    unsigned long long after = monotonic();
    free(marker);
    readings[thread][counts[thread]][0] = before;
    readings[thread][counts[thread]++][1] = after;
    if (after > end) break;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 1;
  duration_ms = argc > 2 ? atol(argv[2]) : 50;
  if (threads < 1 || threads > 2) return 2;
  pthread_barrier_init(&barrier, NULL, (unsigned)threads);
  pthread_t tids[2];
  for (int t = 1; t < threads; t++) pthread_create(&tids[t], NULL, run, (void *)(long)t);
  run((void *)0);
  for (int t = 1; t < threads; t++) pthread_join(tids[t], NULL);
  for (int t = 0; t < threads; t++)
    for (int k = 0; k < counts[t]; k++)
      printf("%d %llu %llu %llu\n", 100000 + 10000 * t + k, readings[t][k][0], readings[t][k][1],
             started);
  return 0;
}
