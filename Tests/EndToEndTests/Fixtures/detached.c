// Starts COUNT detached threads (argv[1]), at most 16 of them unfinished at once; each
// allocates and frees a block of 2,007 bytes. glibc keeps a few exited threads' stacks for the
// next ones, and past that an exiting thread frees others' stacks, and their thread-local
// blocks, after its own thread-specific destructors have run. Prints "threads COUNT" and then
// "peak KB": its peak RSS once they have all finished.
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

static _Atomic long finished;

static void *work(void *unused) {
  (void)unused;
  void *volatile block = malloc(2007);
  free(block);
  atomic_fetch_add(&finished, 1);
  return NULL;
}

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 3000, made = 0;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  while (made < count) {
    pthread_t thread;
    if (pthread_create(&thread, &attr, work, NULL) == 0) made++;
    while (made - atomic_load(&finished) > 16) sched_yield();
  }
  while (atomic_load(&finished) < made) sched_yield();
  struct rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  printf("threads %ld\npeak %ld\n", made, usage.ru_maxrss);
  return 0;
}
