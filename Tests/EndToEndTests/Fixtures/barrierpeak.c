// THREADS threads each allocate BLOCKS blocks of SIZE bytes, and all wait at a barrier while the
// main thread sleeps HOLD_MS; then each frees its blocks and exits. The live peak is every
// block at once, and no thread allocates while it lasts. Prints "peak usable N": the usable
// bytes of all the blocks, as malloc_usable_size gives them.
//   barrierpeak THREADS BLOCKS SIZE HOLD_MS
#include <malloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum { MAX_THREADS = 64, MAX_BLOCKS = 64 };

static pthread_barrier_t all_made, all_done;
static long blocks;
static size_t size;
static size_t usable[MAX_THREADS];

static void *worker(void *arg) {
  size_t *mine = arg;
  void *made[MAX_BLOCKS];
  for (long i = 0; i < blocks; i++) {
    made[i] = malloc(size);
    *mine += malloc_usable_size(made[i]);
  }
  pthread_barrier_wait(&all_made);
  pthread_barrier_wait(&all_done);
  for (long i = 0; i < blocks; i++) free(made[i]);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc != 5) return 100;
  int threads = atoi(argv[1]);
  blocks = atol(argv[2]);
  size = (size_t)atol(argv[3]);
  long hold = atol(argv[4]);
  if (threads < 1 || threads > MAX_THREADS || blocks < 1 || blocks > MAX_BLOCKS) return 100;
  pthread_barrier_init(&all_made, NULL, (unsigned)threads + 1);
  pthread_barrier_init(&all_done, NULL, (unsigned)threads + 1);
  pthread_t ids[MAX_THREADS];
  for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, worker, &usable[t]);
  pthread_barrier_wait(&all_made);
  struct timespec pause = {hold / 1000, hold % 1000 * 1000000};
  while (nanosleep(&pause, &pause) != 0) {
  }
  pthread_barrier_wait(&all_done);
  size_t sum = 0;
  for (int t = 0; t < threads; t++) {
    pthread_join(ids[t], NULL);
    sum += usable[t];
  }
  printf("peak usable %zu\n", sum);
  return 0;
}
