// The main thread allocates alone, then beside a second thread, then after a fork, then alone
// again. Each phase makes blocks of its own size and keeps one in KEEP:
//   alone, for 1.2 s (past two of the shim's flushes, which run every 500 ms): ROUNDS of
//     1,000 blocks of 48 B, 2 ms apart
//   beside: 100,000 of 80 B (main), 100,000 of 112 B (the other thread)
//   after the fork: 50,000 of 144 B
// The child of the fork makes 10 blocks of 3 KiB, which the trace must not hold. Prints
// "ROUNDS rounds".
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { KEEP = 100 };

static void churn(long count, size_t size, void **kept) {
  for (long i = 0; i < count; i++) {
    void *p = malloc(size);
    if (i % KEEP == 0) kept[i / KEEP] = p;
    else free(p);
  }
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static void *kept48[1000 * 1000 / KEEP], *kept80[1000], *kept112[1000], *kept144[500];

static void *other(void *arg) {
  (void)arg;
  churn(100000, 112, kept112);
  return NULL;
}

int main(void) {
  long rounds = 0;
  for (double start = now(); now() - start < 1.2 && rounds < 1000; rounds++) {
    churn(1000, 48, kept48 + rounds * (1000 / KEEP));
    nanosleep(&(struct timespec){0, 2000000}, NULL);
  }
  pthread_t thread;
  if (pthread_create(&thread, NULL, other, NULL) != 0) return 1;
  churn(100000, 80, kept80);
  pthread_join(thread, NULL);
  pid_t child = fork();
  if (child == 0) {
    for (int i = 0; i < 10; i++) kept144[i] = malloc(3072);
    _exit(0);
  }
  if (child < 0 || waitpid(child, NULL, 0) != child) return 1;
  churn(50000, 144, kept144);
  printf("%ld rounds\n", rounds);
  return 0;
}
