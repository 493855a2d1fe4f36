// WAVES (argv[2]) waves of THREADS (argv[1]) threads, all alive at once in a wave (past the
// shim's 1,024 buffers of their own, some share), each making 300 allocations; each thread's
// pthread key destructor, which runs after the shim's own has marked the thread exiting, makes
// DTOR (argv[3]) more and frees its thread's block of 48 bytes.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_barrier_t all_alive;
static pthread_key_t key;
static int dtor_allocations;

static void dtor(void *block) {
  for (int i = 0; i < dtor_allocations; i++) free(malloc(64 * (size_t)i + 1));
  free(block);
}

static void *run(void *arg) {
  long i = (long)arg;
  pthread_setspecific(key, malloc(48));
  pthread_barrier_wait(&all_alive);
  for (int k = 0; k < 300; k++) free(malloc(16 + (size_t)((k * 13 + i) % 5000)));
  return NULL;
}

int main(int argc, char **argv) {
  int threads = atoi(argv[1]), waves = atoi(argv[2]);
  dtor_allocations = atoi(argv[3]);
  pthread_key_create(&key, dtor);
  pthread_t *ids = malloc((size_t)threads * sizeof *ids);
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int w = 0; w < waves; w++) {
    pthread_barrier_init(&all_alive, NULL, (unsigned)threads);
    for (long i = 0; i < threads; i++)
      if (pthread_create(&ids[i], &attr, run, (void *)i)) return 2;
    for (int i = 0; i < threads; i++) pthread_join(ids[i], NULL);
    pthread_barrier_destroy(&all_alive);
    usleep(100000);
  }
  free(ids);
  return 0;
}
