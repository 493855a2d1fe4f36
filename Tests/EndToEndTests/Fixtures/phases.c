// Ground truth for the timeline, diff, objects and export tests. Blocks are made in named
// scopes, so libc's own allocations cannot disturb the figures; marks come through the shim's
// C API, looked up with dlsym when the shim is preloaded.
//   phases       begin | Steps: 10 × 4,000 B | A | Steps: 20 × 4,000 B | B |
//                Spike: 100 × 10,000 B, then all freed | C | Growth: 50 × 1,000 B, 1 ms apart |
//                D | the first 10 Steps blocks freed | E
//                It sleeps 20 ms after each mark, so a timeline step of 10 ms or less never
//                holds work from both sides of a mark.
//   signal N     Between: 7 × 333 B between two raises of signal N (each a mark, by the shim)
//   every        Ticks: 30 × 64 B, 10 ms apart (for --mark-every)
#include <dlfcn.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef uint32_t (*push_fn)(const char *);
typedef void (*pop_fn)(uint32_t);
typedef void (*mark_fn)(const char *);
static push_fn push;
static pop_fn pop;
static mark_fn mark_api;

static void pause_ms(long ms) {
  struct timespec pause = {ms / 1000, (ms % 1000) * 1000000};
  while (nanosleep(&pause, &pause) != 0) {}
}

static void mark(const char *name) {
  if (mark_api) mark_api(name);
  pause_ms(20);
}

__attribute__((noinline)) static void make_steps(void **blocks, int count) {
  uint32_t token = push ? push("Steps") : 0;
  for (int i = 0; i < count; i++) blocks[i] = malloc(4000);
  if (pop) pop(token);
}

__attribute__((noinline)) static void spike(void) {
  static void *blocks[100];
  uint32_t token = push ? push("Spike") : 0;
  for (int i = 0; i < 100; i++) blocks[i] = malloc(10000);
  for (int i = 0; i < 100; i++) free(blocks[i]);
  if (pop) pop(token);
}

__attribute__((noinline)) static void grow(void **blocks) {
  uint32_t token = push ? push("Growth") : 0;
  for (int i = 0; i < 50; i++) {
    blocks[i] = malloc(1000);
    pause_ms(1);
  }
  if (pop) pop(token);
}

static int phases(void) {
  static void *steps[30], *growth[50];
  mark("begin");
  make_steps(steps, 10);
  mark("A");
  make_steps(steps + 10, 20);
  mark("B");
  spike();
  mark("C");
  grow(growth);
  mark("D");
  for (int i = 0; i < 10; i++) free(steps[i]);
  mark("E");
  printf("phases done\n");
  return 0;
}

static int signals(int sig) {
  static void *blocks[7];
  // A program inherits its signal mask: started from a test runner's worker thread, it would
  // have every signal blocked, and the mark would wait until exit, unseen.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, sig);
  sigprocmask(SIG_UNBLOCK, &set, NULL);
  raise(sig);
  uint32_t token = push ? push("Between") : 0;
  for (int i = 0; i < 7; i++) blocks[i] = malloc(333);
  if (pop) pop(token);
  raise(sig);
  printf("signals done\n");
  return 0;
}

static int every(void) {
  static void *blocks[30];
  uint32_t token = push ? push("Ticks") : 0;
  for (int i = 0; i < 30; i++) {
    blocks[i] = malloc(64);
    pause_ms(10);
  }
  if (pop) pop(token);
  printf("every done\n");
  return 0;
}

int main(int argc, char **argv) {
  push = (push_fn)dlsym(RTLD_DEFAULT, "heapline_scope_push");
  pop = (pop_fn)dlsym(RTLD_DEFAULT, "heapline_scope_pop");
  mark_api = (mark_fn)dlsym(RTLD_DEFAULT, "heapline_mark");
  if (argc == 2 && strcmp(argv[1], "phases") == 0) return phases();
  if (argc == 3 && strcmp(argv[1], "signal") == 0) return signals(atoi(argv[2]));
  if (argc == 2 && strcmp(argv[1], "every") == 0) return every();
  fprintf(stderr, "usage: phases phases | signal N | every\n");
  return 100;
}
