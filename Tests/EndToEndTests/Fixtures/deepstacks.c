// Ground truth for the unwinder's check: 300 blocks of 777 bytes, each allocated at the bottom of
// a chain of calls 0 to 99 deep (past the recorded depth of 64), reached through two callers in
// turn so that consecutive stacks share their outer part and differ inside; a third of them from
// a second thread, and every tenth through a frame that sizes its stack with alloca.
#include <alloca.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

enum { SIZE = 777, CHAINS = 100 };
static void *kept[3 * CHAINS];
static int next;

__attribute__((noinline)) static void *bottom(int wide) {
  if (wide) {  // a variable-sized frame: its CFA is in rbp whatever the optimization
    char *scratch = alloca((size_t)wide * 16);
    memset(scratch, 0, (size_t)wide * 16);
    __asm__ volatile("" ::"r"(scratch) : "memory");
  }
  void *p = malloc(SIZE);
  __asm__ volatile("" ::"r"(p) : "memory");
  return p;
}

__attribute__((noinline)) static void *chain(int depth, int wide) {
  void *p = depth ? chain(depth - 1, wide) : bottom(wide);
  __asm__ volatile("" ::"r"(p) : "memory");  // no tail call: every level keeps its frame
  return p;
}

__attribute__((noinline)) static void *left(int depth, int wide) {
  void *p = chain(depth, wide);
  __asm__ volatile("" ::"r"(p) : "memory");
  return p;
}

__attribute__((noinline)) static void *right(int depth, int wide) {
  void *p = chain(depth, wide);
  __asm__ volatile("" ::"r"(p) : "memory");
  return p;
}

static void run(int round) {
  for (int d = 0; d < CHAINS; d++) {
    int wide = d % 10 == 0 ? d + 1 : 0;
    int i = __atomic_fetch_add(&next, 1, __ATOMIC_RELAXED);
    kept[i] = (d + round) % 2 ? left(d, wide) : right(d, wide);
  }
}

static void *worker(void *arg) {
  run(1);
  return arg;
}

int main(void) {
  run(0);
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL) != 0) return 1;
  pthread_join(t, NULL);
  run(2);
  for (int i = 0; i < 3 * CHAINS; i++) free(kept[i]);
  return 0;
}
