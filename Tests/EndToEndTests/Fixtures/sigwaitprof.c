// Blocks SIGPROF, SIGUSR1 and SIGTERM and takes each with sigwait, after sending it to the
// process: a process-directed signal goes to a thread that does not block it, and untraced
// there is none, so each waits for sigwait. Prints what it took. With an argument, toggle().
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static void ignore(int signal) { (void)signal; }

// With `toggle`: 300 times, sets a SIGPROF handler and takes it away again, then sends SIGPROF
// to the process with it blocked and takes it with sigtimedwait; prints how many it took.
static int toggle(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGPROF);
  int taken = 0;
  for (int i = 0; i < 300; i++) {
    struct sigaction action = {0};
    action.sa_handler = ignore;
    sigaction(SIGPROF, &action, NULL);
    action.sa_handler = SIG_DFL;
    sigaction(SIGPROF, &action, NULL);
    sigprocmask(SIG_BLOCK, &set, NULL);
    kill(getpid(), SIGPROF);
    struct timespec wait = {1, 0};
    taken += sigtimedwait(&set, NULL, &wait) == SIGPROF;
    sigprocmask(SIG_UNBLOCK, &set, NULL);
  }
  printf("taken %d\n", taken);
  return 0;
}

int main(int argc, char **argv) {
  if (argc > 1) return toggle();
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
