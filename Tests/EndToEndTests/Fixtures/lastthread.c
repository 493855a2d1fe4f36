// The main thread calls pthread_exit while a worker runs on: the worker waits until the main
// thread has gone, makes KEPT blocks of KEPT_SIZE bytes that a global holds and LOST blocks of
// LOST_SIZE bytes that nothing points to, and returns. The process then ends as glibc ends it
// when its last thread exits: exit(0), with atexit handlers and destructors, which print.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { KEPT = 10, KEPT_SIZE = 1000, LOST = 4, LOST_SIZE = 24 };

static pthread_t main_thread;
static void *kept[KEPT];

static void at_exit(void) { printf("atexit handler ran\n"); }

__attribute__((destructor)) static void destructor(void) { printf("destructor ran\n"); }

__attribute__((noinline)) static void make_blocks(void) {
  for (int i = 0; i < KEPT; i++) kept[i] = malloc(KEPT_SIZE);
  for (int i = 0; i < LOST; i++) {
    void *volatile lost = malloc(LOST_SIZE);
    (void)lost;
  }
}

static void *worker(void *arg) {
  (void)arg;
  pthread_join(main_thread, NULL);  // returns once the main thread has exited
  make_blocks();
  printf("worker made %d blocks\n", KEPT + LOST);
  return NULL;
}

int main(void) {
  atexit(at_exit);
  main_thread = pthread_self();
  pthread_t thread;
  if (pthread_create(&thread, NULL, worker, NULL) != 0) return 2;
  pthread_exit(NULL);
}
