// Everything the shim must survive inside someone else's process, each with a known result.
// Blocks are counted in named scopes, set through the shim's C API when it is preloaded:
//   early    7 blocks of 111 bytes, made by a constructor
//   signals  1,000 blocks of 200 bytes kept, of 100,000 made while a timer signal's handler
//            mallocs and frees
//   threads  2,000 blocks of 1,000 bytes: 200 short-lived threads keep 10 each
// It also dlopens libsqlite3 and opens a database there, and exits while a thread is still
// allocating.
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>

typedef uint32_t (*push_fn)(const char *);
typedef void (*pop_fn)(uint32_t);
static push_fn push;
static pop_fn pop;

static uint32_t scope(const char *name) { return push ? push(name) : 0; }
static void end_scope(uint32_t token) {
  if (pop) pop(token);
}

static void *early_blocks[7];

__attribute__((constructor)) static void early(void) {
  push = (push_fn)dlsym(RTLD_DEFAULT, "heapline_scope_push");
  pop = (pop_fn)dlsym(RTLD_DEFAULT, "heapline_scope_pop");
  uint32_t token = scope("early");
  for (int i = 0; i < 7; i++) early_blocks[i] = malloc(111);
  end_scope(token);
}

static void on_alarm(int signal) {
  (void)signal;
  free(malloc(64));  // not async-signal-safe, but programs do it, and it must not deadlock
}

static void with_signals(void) {
  signal(SIGALRM, on_alarm);
  struct itimerval every = {{0, 200}, {0, 200}};
  setitimer(ITIMER_REAL, &every, NULL);
  static void *kept[1000];
  uint32_t token = scope("signals");
  for (int i = 0; i < 100000; i++) {
    void *p = malloc(200);
    if (i % 100 == 0) kept[i / 100] = p;
    else free(p);
  }
  end_scope(token);
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
}

static void *short_lived(void *arg) {
  void **kept = arg;
  uint32_t token = scope("threads");
  for (int i = 0; i < 10; i++) kept[i] = malloc(1000);
  end_scope(token);
  return NULL;
}

static void with_threads(void) {
  static void *kept[200][10];
  for (int round = 0; round < 50; round++) {
    pthread_t threads[4];
    for (int t = 0; t < 4; t++) pthread_create(&threads[t], NULL, short_lived, kept[round * 4 + t]);
    for (int t = 0; t < 4; t++) pthread_join(threads[t], NULL);
  }
}

static void *database;

static void with_dlopen(void) {
  void *sqlite = dlopen("libsqlite3.so.0", RTLD_NOW);
  if (!sqlite) return;
  int (*open)(const char *, void **) = (int (*)(const char *, void **))dlsym(sqlite, "sqlite3_open");
  if (open) open(":memory:", &database);
}

static void *churn(void *arg) {
  (void)arg;
  for (;;) free(malloc(32));
  return NULL;
}

int main(void) {
  with_signals();
  with_threads();
  with_dlopen();
  pthread_t forever;
  pthread_create(&forever, NULL, churn, NULL);
  printf("survived: api %s, sqlite %s\n", push ? "found" : "missing", database ? "open" : "no");
  fflush(stdout);
  exit(0);  // with `forever` still allocating
}
