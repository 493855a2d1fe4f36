// A signal handler that calls the shim's API (heapline_mark, heapline_backing_alloc and _free)
// while its thread is inside malloc, over and over: another thread sends SIGALRM every 50 µs
// while main makes and frees 300,000 blocks. The handler makes no call into glibc's allocator,
// so interrupting it is no undefined behaviour. Prints "hits N": N marks, N stores reported, and
// N / 2 of them released, each either written or counted as lost by the shim.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void (*mark)(const char *);
static void (*report)(uint64_t, uint64_t, const char *);
static uint64_t (*release)(uint64_t);
static volatile long hits;
static volatile int stop;

static void on_alarm(int sig) {
  (void)sig;
  long n = hits++;
  mark("sig");
  report(0x1000 + (uint64_t)n, 4096, "SigStore");
  if (n % 2) release(0x1000 + (uint64_t)n);
}

static void *spam(void *target) {
  while (!stop) {
    pthread_kill((pthread_t)target, SIGALRM);
    usleep(50);
  }
  return NULL;
}

int main(void) {
  mark = (void (*)(const char *))dlsym(RTLD_DEFAULT, "heapline_mark");
  report = (void (*)(uint64_t, uint64_t, const char *))dlsym(RTLD_DEFAULT, "heapline_backing_alloc");
  release = (uint64_t(*)(uint64_t))dlsym(RTLD_DEFAULT, "heapline_backing_free");
  if (!mark || !report || !release) return 2;
  struct sigaction action = {0};
  action.sa_handler = on_alarm;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  pthread_t sender;
  pthread_create(&sender, NULL, spam, (void *)pthread_self());
  for (int round = 0; round < 300; round++) {
    void *blocks[1000];
    for (int i = 0; i < 1000; i++) blocks[i] = malloc((size_t)i + 1);
    for (int i = 0; i < 1000; i++) free(blocks[i]);
  }
  stop = 1;
  pthread_join(sender, NULL);
  signal(SIGALRM, SIG_IGN);
  printf("hits %ld\n", hits);
  return 0;
}
