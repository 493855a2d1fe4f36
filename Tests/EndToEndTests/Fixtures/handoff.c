// Blocks made on one thread and freed on another at once, as a producer and a consumer do:
// the producer makes COUNT blocks of 48 bytes and hands each over through a small queue, the
// consumer frees each as soon as it takes it. Prints "handed COUNT".
//   handoff COUNT
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { SLOTS = 64 };
static void *queue[SLOTS];
static long head, tail, count;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;

static void *consume(void *arg) {
  (void)arg;
  for (long taken = 0; taken < count; taken++) {
    pthread_mutex_lock(&lock);
    while (head == tail) pthread_cond_wait(&changed, &lock);
    void *p = queue[tail++ % SLOTS];
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
    free(p);
  }
  return NULL;
}

int main(int argc, char **argv) {
  count = argc > 1 ? atol(argv[1]) : 100000;
  pthread_t consumer;
  if (pthread_create(&consumer, NULL, consume, NULL) != 0) return 1;
  for (long made = 0; made < count; made++) {
    void *p = malloc(48);
    pthread_mutex_lock(&lock);
    while (head - tail == SLOTS) pthread_cond_wait(&changed, &lock);
    queue[head++ % SLOTS] = p;
    pthread_cond_signal(&changed);
    pthread_mutex_unlock(&lock);
  }
  pthread_join(consumer, NULL);
  printf("handed %ld\n", count);
  return 0;
}
