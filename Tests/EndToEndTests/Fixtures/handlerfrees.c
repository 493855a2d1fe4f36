// A timer's signal handler that frees 100 blocks at a time while its thread allocates and frees
// without pause: the handler frees blocks of 256 KiB, each a mapping of its own, which glibc
// gives back without its arena's lock, and the loop's blocks of 24 to 279 bytes come from the
// thread's cache, so neither waits for the other untraced. Most signals land inside the tracer,
// where a handler's calls wait for the event they interrupted: more than its queue holds.
// Prints "freed N" once the handlers have freed all N blocks.
//   handlerfrees N
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>

enum { BIG = 256 * 1024, PER_SIGNAL = 100 };
static void **big;
static int count;
static volatile int next;

static void handler(int sig) {
  (void)sig;
  for (int k = 0; k < PER_SIGNAL && next < count; k++) free(big[next++]);
}

int main(int argc, char **argv) {
  count = argc > 1 ? atoi(argv[1]) : 2000;
  big = calloc((size_t)count, sizeof *big);
  for (int i = 0; i < count; i++) big[i] = malloc(BIG);
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigaction(SIGALRM, &action, NULL);
  struct itimerval every = {{0, 200}, {0, 200}}, off = {{0, 0}, {0, 0}};
  setitimer(ITIMER_REAL, &every, NULL);
  for (unsigned long loops = 0; next < count; loops++) free(malloc(24 + (loops & 255)));
  setitimer(ITIMER_REAL, &off, NULL);
  free(big);
  printf("freed %d\n", next);
  return 0;
}
