// The main thread calls pthread_exit, and a chain of threads runs on: each allocates and frees
// a block of 48 bytes, starts its successor (detached) and exits, so that one thread of the
// program is alive at any time, and for an instant two. After MS milliseconds (argv[1]) the
// last one prints "chain of N threads" and calls exit(3).
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double until;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *step(void *arg) {
  long made = (long)arg;
  void *volatile block = malloc(48);
  free(block);
  if (now() >= until) {
    printf("chain of %ld threads\n", made);
    fflush(stdout);
    exit(3);
  }
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_t next;
  if (pthread_create(&next, &attr, step, (void *)(made + 1))) exit(9);
  return NULL;
}

int main(int argc, char **argv) {
  until = now() + (argc > 1 ? atof(argv[1]) : 1000) / 1000;
  pthread_t first;
  if (pthread_create(&first, NULL, step, (void *)1L)) return 9;
  pthread_detach(first);
  pthread_exit(NULL);
}
