// Threads whose cancellation is already pending when they make their first allocation. malloc
// and free are no cancellation points: untraced, each thread is cancelled at its
// pthread_testcancel, after its block was allocated and freed.
//
//   cancelfirst new|unwound|returning|exec|exit|stdio ROUNDS
//
// new: the first thread's malloc takes a new buffer of the shim's (which opens its memory file).
// unwound: a thread that ran first leaves a buffer to reuse, and each malloc is called from a
// function whose CFI only libunwind can follow, so the shim hands its frame to libunwind (which
// checks addresses by writing them to a pipe).
// returning: the thread returns without reaching a cancellation point, so that untraced it is
// never cancelled; its exit writes its buffer out (a file write).
// exec: the thread then execs /dev/null, which fails (EACCES), and returns; an exec is no
// cancellation point either.
// exit: the thread then calls exit(5), which is none either: the process ends with status 5.
// stdio: the thread then writes to stderr, and is cancelled inside the write, whose cleanup
// releases the stream's lock; main writes to stderr at the end.
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "unwound.h"

static _Atomic int go;
static int unwound, returning, exec, exits, stdio;

static void *plain(void *arg) {
  (void)arg;
  free(malloc(2000));
  return NULL;
}

static void *worker(void *arg) {
  (void)arg;
  while (!go) {
  }
  void *p = unwound ? alloc_unwound(1000) : malloc(1000);
  free(p);
  if (exec) execv("/dev/null", (char *[]){"/dev/null", NULL});
  if (exits) exit(5);
  if (stdio) fputs("not written: cancelled first\n", stderr);
  if (!returning && !exec) pthread_testcancel();
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  unwound = strcmp(argv[1], "unwound") == 0;
  returning = strcmp(argv[1], "returning") == 0;
  exec = strcmp(argv[1], "exec") == 0;
  exits = strcmp(argv[1], "exit") == 0;
  stdio = strcmp(argv[1], "stdio") == 0;
  int rounds = atoi(argv[2]), canceled = 0;
  for (int r = 0; r < rounds; r++) {
    if (unwound) {
      pthread_t t0;
      pthread_create(&t0, NULL, plain, NULL);
      pthread_join(t0, NULL);
    }
    go = 0;
    pthread_t t;
    pthread_create(&t, NULL, worker, NULL);
    pthread_cancel(t);
    go = 1;
    void *result;
    pthread_join(t, &result);
    canceled += result == PTHREAD_CANCELED;
  }
  printf("canceled %d of %d\n", canceled, rounds);
  if (stdio) fputs("stderr is free\n", stderr);
  return 0;
}
