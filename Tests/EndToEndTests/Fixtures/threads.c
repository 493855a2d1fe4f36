// Four threads allocate and free at once. Thread t makes 10000 blocks of 32*(t+1) bytes and
// frees all but 100 of them, and every thread frees 50 blocks made by the thread before it,
// handed over after a barrier. Live at exit: per thread 50 blocks of its size.
#include <pthread.h>
#include <stdlib.h>

enum { THREADS = 4, BLOCKS = 10000, KEPT = 100, HANDED = 50 };
static void *kept[THREADS][KEPT];
static pthread_barrier_t barrier;

static void *work(void *arg) {
  long t = (long)arg;
  size_t size = 32 * (size_t)(t + 1);
  for (int i = 0; i < BLOCKS; i++) {
    void *p = malloc(size);
    if (i < BLOCKS - KEPT) free(p);
    else kept[t][i - (BLOCKS - KEPT)] = p;
  }
  pthread_barrier_wait(&barrier);
  long other = (t + THREADS - 1) % THREADS;
  for (int i = 0; i < HANDED; i++) free(kept[other][i]);
  return NULL;
}

int main(void) {
  pthread_t threads[THREADS];
  pthread_barrier_init(&barrier, NULL, THREADS);
  for (long t = 0; t < THREADS; t++) pthread_create(&threads[t], NULL, work, (void *)t);
  for (int t = 0; t < THREADS; t++) pthread_join(threads[t], NULL);
  return 0;
}
