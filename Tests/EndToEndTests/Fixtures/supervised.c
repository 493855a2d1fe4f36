// A program that signals its parent, which under `heapline record` is record. The mode is
// argv[1]:
//   signals   handles SIGUSR1, SIGUSR2, SIGALRM and SIGRTMIN+2, makes 100 blocks of 100 bytes,
//             sends each of the four to its parent, waits (5 s at most) until all four have come
//             back, prints "handled N", makes 100 more blocks and exits with status 3
//   stop      prints "stopping", stops itself (SIGSTOP), and once continued prints "resumed"
//             and exits with status 4
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static void count(int signal) {
  (void)signal;
  handled++;
}

int main(int argc, char **argv) {
  if (argc > 1 && !strcmp(argv[1], "signals")) {
    int signals[] = {SIGUSR1, SIGUSR2, SIGALRM, SIGRTMIN + 2};
    for (int i = 0; i < 4; i++) signal(signals[i], count);
    for (int i = 0; i < 100; i++) malloc(100);
    for (int i = 0; i < 4; i++) kill(getppid(), signals[i]);
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500 && handled < 4; i++) nanosleep(&tick, NULL);
    printf("handled %d\n", (int)handled);
    for (int i = 0; i < 100; i++) malloc(100);
    return 3;
  }
  if (argc > 1 && !strcmp(argv[1], "stop")) {
    printf("stopping\n");
    fflush(stdout);
    raise(SIGSTOP);
    printf("resumed\n");
    return 4;
  }
  return 64;
}
