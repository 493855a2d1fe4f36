// One thread loads and unloads the library named by argv[1] ROUNDS times, as fast as it can,
// while THREADS others allocate and free: glibc's dlclose frees the library's pieces (its link
// map, its name, its versions) while it holds the loader's lock. First it makes KEEP blocks of
// 32 bytes that stay live (0 if not given). Prints "reloaded ROUNDS".
//   reloading LIBRARY ROUNDS THREADS [KEEP]
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static _Atomic int done;
static void *list;

static void *allocate(void *unused) {
  for (unsigned i = 0; !done; i++) free(malloc(16 + i % 512));
  return unused;
}

int main(int argc, char **argv) {
  if (argc != 4 && argc != 5) return 2;
  int rounds = atoi(argv[2]), threads = atoi(argv[3]);
  for (long k = argc == 5 ? atol(argv[4]) : 0; k > 0; k--) {
    void **kept = malloc(32);
    *kept = list;  // a list that a global holds: no leak
    list = kept;
  }
  pthread_t ids[16];
  if (threads < 0 || threads > 16) return 2;
  for (int t = 0; t < threads; t++) pthread_create(&ids[t], NULL, allocate, NULL);
  for (int r = 0; r < rounds; r++) {
    void *library = dlopen(argv[1], RTLD_NOW);
    if (!library || dlclose(library) != 0) return 3;
  }
  done = 1;
  for (int t = 0; t < threads; t++) pthread_join(ids[t], NULL);
  printf("reloaded %d\n", rounds);
  return 0;
}
