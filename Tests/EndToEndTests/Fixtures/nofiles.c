// The main thread lowers the descriptor limit to 3, so that no new descriptor can be opened,
// starts a worker and calls pthread_exit; the worker allocates, prints and returns, the last of
// the program's threads. Untraced the process then ends with status 0. With `closeall`, it
// first closes every descriptor above 2, the shim's too, as a daemon does.
#define _GNU_SOURCE  // closefrom
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static void *work(void *arg) {
  (void)arg;
  usleep(300 * 1000);
  free(malloc(100));
  printf("worker done\n");
  fflush(stdout);
  return NULL;
}

int main(int argc, char **argv) {
  dlopen("libgcc_s.so.1", RTLD_NOW);  // pthread_exit unwinds with it, untraced too
  if (argc > 1 && strcmp(argv[1], "closeall") == 0) closefrom(3);
  pthread_t thread;
  pthread_create(&thread, NULL, work, NULL);
  struct rlimit limit = {3, 4096};
  setrlimit(RLIMIT_NOFILE, &limit);
  pthread_exit(NULL);
}
