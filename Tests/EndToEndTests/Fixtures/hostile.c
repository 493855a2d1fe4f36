// Everything the shim must survive inside someone else's process, each with a known result.
// Blocks are counted in named scopes, set through the shim's C API when it is preloaded:
//   early    7 blocks of 111 bytes, made by a constructor
//   signals  the blocks of 64 bytes that a timer signal's handler mallocs, every other one freed
//            again, while the main thread is inside the shim (reporting backing stores, which
//            never calls glibc's malloc, so the handler's malloc is no undefined behaviour):
//            the program prints how many it made and how many it kept
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

typedef void (*backing_alloc_fn)(uint64_t, uint64_t, const char *);
typedef uint64_t (*backing_free_fn)(uint64_t);
enum { HANDLER_BLOCKS = 200000 };
static void *handler_blocks[HANDLER_BLOCKS];
static volatile sig_atomic_t handler_made, handler_kept;

static void on_alarm(int signal) {
  (void)signal;
  if (handler_made >= HANDLER_BLOCKS) return;
  void *p = malloc(64);
  if (handler_made++ % 2) free(p);
  else handler_blocks[handler_kept++] = p;
}

static void with_signals(void) {
  backing_alloc_fn report = (backing_alloc_fn)dlsym(RTLD_DEFAULT, "heapline_backing_alloc");
  backing_free_fn release = (backing_free_fn)dlsym(RTLD_DEFAULT, "heapline_backing_free");
  if (!report || !release) return;
  uint32_t token = scope("signals");
  signal(SIGALRM, on_alarm);
  // Every millisecond: the shim keeps 64 of a thread's handler calls while the thread is in
  // an event, so only an event of over 64 ms (a loaded machine descheduling a buffer's
  // compression) could lose one, which the trace would count. With room for 16, a run beside
  // valgrind and a Swift build lost 18.
  struct itimerval every = {{0, 1000}, {0, 1000}};
  setitimer(ITIMER_REAL, &every, NULL);
  // In the shim nearly all the time, until the handler has run 1,000 times
  for (int i = 0; handler_made < 1000 && i < 20000000; i++) {
    report((uint64_t)i + 1, 4096, "hostile");
    release((uint64_t)i + 1);
  }
  struct itimerval off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &off, NULL);
  signal(SIGALRM, SIG_IGN);
  end_scope(token);
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
  printf("handler made %d kept %d\n", (int)handler_made, (int)handler_kept);
  fflush(stdout);
  exit(0);  // with `forever` still allocating
}
