// Backing stores and memory warnings, through the shim's API (looked up with dlsym, since the
// shim is preloaded). Modes:
//   backing   maps and reports "Frames" stores of 1 MiB (3 kept, 2 released) and one
//             "Tiles" store of 64 KiB, replaced once
//   warn N    registers an observer "cache" that frees 1,000,000 bytes a warning, and waits
//             until it has run N times (warnings come from --warn-at or --warn-signal)
//   signal    registers that observer, then sends itself the warning signal twice: kill(2),
//             then sigqueue(2) with level 3; waits until the observer has run twice
//   budget    frees an 8 MiB "Cache" scope on the first warning; meanwhile grows a "Hoard"
//             scope of 1 MiB mallocs and "Frames" stores of 1 MiB, until the limit kills it
#include <dlfcn.h>
#include <semaphore.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static void (*backing_alloc)(uint64_t, uint64_t, const char *);
static uint64_t (*backing_free)(uint64_t);
static int (*add_observer)(const char *, uint64_t (*)(int, void *), void *);
static uint32_t (*scope_push)(const char *);
static void (*scope_pop)(uint32_t);

static void *lookup(const char *name) {
  void *p = dlsym(RTLD_DEFAULT, name);
  if (!p) {
    fprintf(stderr, "%s not found: not preloaded?\n", name);
    exit(2);
  }
  return p;
}

static void *map_store(size_t bytes, const char *category) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) exit(3);
  memset(p, 1, bytes);  // resident, as decoded pixels are
  backing_alloc((uintptr_t)p, bytes, category);
  return p;
}

static void unmap_store(void *p, size_t bytes) {
  backing_free((uintptr_t)p);
  munmap(p, bytes);
}

static int backing(void) {
  void *frames[5];
  for (int i = 0; i < 5; i++) frames[i] = map_store(1 << 20, "Frames");
  unmap_store(frames[1], 1 << 20);
  unmap_store(frames[3], 1 << 20);
  void *tile = map_store(64 << 10, "Tiles");
  backing_alloc((uintptr_t)tile, 64 << 10, "Tiles");  // reported again: replaces the store
  printf("backing done\n");
  return 0;
}

static sem_t answered;
static int answers;

static uint64_t cache_observer(int level, void *context) {
  (void)context;
  printf("observer: level %d\n", level);
  fflush(stdout);
  answers++;
  sem_post(&answered);
  return 1000000;
}

static int warn(int count) {
  sem_init(&answered, 0, 0);
  add_observer("cache", cache_observer, NULL);
  for (int i = 0; i < count; i++) sem_wait(&answered);
  printf("warned %d times\n", answers);
  return 0;
}

static int send_signals(void) {
  sem_init(&answered, 0, 0);
  add_observer("cache", cache_observer, NULL);
  kill(getpid(), SIGUSR1);
  sem_wait(&answered);
  union sigval value = {.sival_int = 3};
  sigqueue(getpid(), SIGUSR1, value);
  sem_wait(&answered);
  printf("warned %d times\n", answers);
  return 0;
}

enum { MIB = 1 << 20, CACHE_BLOCKS = 8 };
static void *cache[CACHE_BLOCKS];

static uint64_t free_cache(int level, void *context) {
  (void)level;
  (void)context;
  if (!cache[0]) return 0;
  for (int i = 0; i < CACHE_BLOCKS; i++) {
    free(cache[i]);
    cache[i] = NULL;
  }
  return (uint64_t)CACHE_BLOCKS * MIB;
}

static int budget(void) {
  uint32_t token = scope_push("Cache");
  for (int i = 0; i < CACHE_BLOCKS; i++) memset(cache[i] = malloc(MIB), 1, MIB);
  scope_pop(token);
  add_observer("cache", free_cache, NULL);
  for (int step = 0; step < 4000; step++) {
    token = scope_push("Hoard");
    memset(malloc(MIB), 1, MIB);
    scope_pop(token);
    if (step % 4 == 3) map_store(MIB, "Frames");
    usleep(5000);
  }
  printf("the limit never came\n");
  return 4;
}

int main(int argc, char **argv) {
  backing_alloc = lookup("heapline_backing_alloc");
  backing_free = lookup("heapline_backing_free");
  add_observer = lookup("heapline_pressure_add_observer");
  scope_push = lookup("heapline_scope_push");
  scope_pop = lookup("heapline_scope_pop");
  const char *mode = argc > 1 ? argv[1] : "backing";
  if (!strcmp(mode, "warn")) return warn(argc > 2 ? atoi(argv[2]) : 1);
  if (!strcmp(mode, "signal")) return send_signals();
  if (!strcmp(mode, "budget")) return budget();
  return backing();
}
