// Blocks SIGPROF, SIGUSR1 and SIGTERM and takes each with sigwait, after sending it to the
// process: a process-directed signal goes to a thread that does not block it, and untraced
// there is none, so each waits for sigwait. Prints what it took.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPROF);
  sigaddset(&set, SIGUSR1);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  int signals[] = {SIGUSR1, SIGPROF, SIGTERM};
  for (int i = 0; i < 3; i++) {
    free(malloc(10));
    kill(getpid(), signals[i]);
    int got = 0;
    sigwait(&set, &got);
    printf("got %d\n", got);
    fflush(stdout);
  }
  return 0;
}
