// A producer passes blocks of 72 bytes to a consumer through a queue of 8 slots, and the consumer
// stops for 12 ms after every 1,000, while the producer goes on allocating alone (blocks of 24
// bytes, freed at once) until there is room again. A producer reserves a slot before it
// allocates, and the consumer gives its slot back only after it has freed the block and waited
// 4 µs more (four of the shim's 1,024 ns grains), so at no instant are more than 8 blocks of 72
// bytes live, and every free comes well before the allocation that its slot lets happen.
// With HOGS, that many more threads spin without allocating until the end, so that the two
// are descheduled for milliseconds at a time, as on a loaded machine. Prints "passed N".
//   queued COUNT [HOGS]
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

enum { SLOTS = 8, SIZE = 72, BURST = 1000 };
static void *_Atomic ring[SLOTS];
static atomic_long taken;  // blocks the consumer has freed and given the slot of back
static long count;

static long long now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

static void *consume(void *arg) {
  (void)arg;
  for (long i = 0; i < count; i++) {
    void *p;
    while (!(p = atomic_exchange(&ring[i % SLOTS], NULL))) {
    }
    free(p);
    for (long long until = now_ns() + 4000; now_ns() < until;) {
    }
    atomic_store(&taken, i + 1);  // the slot is free again
    if (i % BURST == BURST - 1) usleep(12000);
  }
  return NULL;
}

static atomic_int done;

static void *hog(void *arg) {
  (void)arg;
  while (!atomic_load_explicit(&done, memory_order_relaxed)) {
  }
  return NULL;
}

int main(int argc, char **argv) {
  count = argc > 1 ? atol(argv[1]) : 20000;
  int hogs = argc > 2 ? atoi(argv[2]) : 0;
  pthread_t spinning[8];
  for (int i = 0; i < hogs && i < 8; i++) pthread_create(&spinning[i], NULL, hog, NULL);
  pthread_t consumer;
  pthread_create(&consumer, NULL, consume, NULL);
  for (long i = 0; i < count; i++) {
    while (i - atomic_load(&taken) >= SLOTS) free(malloc(24));
    void *p = malloc(SIZE);
    atomic_store(&ring[i % SLOTS], p);
  }
  pthread_join(consumer, NULL);
  atomic_store(&done, 1);
  for (int i = 0; i < hogs && i < 8; i++) pthread_join(spinning[i], NULL);
  printf("passed %ld\n", count);
  return 0;
}
