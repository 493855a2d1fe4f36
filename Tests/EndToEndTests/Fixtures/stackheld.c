// Two threads, each holding 1,000 blocks in an array on its own stack, replace one of them at a
// time (a free and a malloc of 16 to 215 bytes) for SECONDS, then free them all and print "ok".
// No block is ever lost: a scan that calls one lost missed a thread's stack.
//   stackheld SECONDS
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { HELD = 1000 };
static double seconds;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

static void *churn(void *arg) {
  void *held[HELD] = {0};
  unsigned seed = (unsigned)(long)arg * 7919 + 1;
  for (double end = now() + seconds; now() < end;) {
    for (int k = 0; k < 1000; k++) {
      seed = seed * 1103515245 + 12345;
      int i = (int)((seed >> 8) % HELD);
      free(held[i]);
      held[i] = malloc(16 + (seed >> 3) % 200);
    }
  }
  for (int i = 0; i < HELD; i++) free(held[i]);
  return NULL;
}

int main(int argc, char **argv) {
  seconds = argc > 1 ? atof(argv[1]) : 1;
  pthread_t threads[2];
  for (long i = 0; i < 2; i++) pthread_create(&threads[i], NULL, churn, (void *)i);
  for (int i = 0; i < 2; i++) pthread_join(threads[i], NULL);
  printf("ok\n");
  return 0;
}
