// A program whose child signals the program's parent, which under `heapline record` is record.
// The mode is argv[1]:
//   signals   handles SIGUSR1, SIGUSR2, SIGALRM and SIGRTMIN+2, makes 100 blocks of 100 bytes,
//             has a child send each of the four to its parent, waits (5 s at most) until all
//             four have come, prints "handled N", makes 100 more blocks and exits with status 3
//   group     handles SIGUSR1, sends it to its own process group, waits 300 ms, prints
//             "handled N" and exits with status 3
//   stop      prints "stopping", stops itself (SIGSTOP), and once continued prints "resumed"
//             and exits with status 4
//   stopcont  as stop, but a child of its own continues it after 200 ms
//   restop    stops itself (SIGSTOP) 5 times, at once again each time it is continued, and
//             prints how many SIGCONTs its handler took; exits with status 4
//   late      makes 20,000 blocks of 100 bytes, starts a child in a session of its own that
//             sends SIGTERM to the program's parent once the program has ended (the child is
//             given another parent then), and exits at once with status 5
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
    pid_t parent = getppid();
    if (fork() == 0) {
      for (int i = 0; i < 4; i++) kill(parent, signals[i]);
      _exit(0);
    }
    struct timespec tick = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500 && handled < 4; i++) nanosleep(&tick, NULL);
    printf("handled %d\n", (int)handled);
    for (int i = 0; i < 100; i++) malloc(100);
    return 3;
  }
  if (argc > 1 && !strcmp(argv[1], "group")) {
    signal(SIGUSR1, count);
    kill(0, SIGUSR1);
    struct timespec wait = {0, 300 * 1000 * 1000};
    while (nanosleep(&wait, &wait) != 0) {
    }
    printf("handled %d\n", (int)handled);
    return 3;
  }
  if (argc > 1 && !strcmp(argv[1], "late")) {
    for (int i = 0; i < 20000; i++) malloc(100);
    pid_t parent = getppid();
    pid_t self = getpid();
    if (fork() == 0) {
      setsid();
      struct timespec tick = {0, 1000 * 1000};
      for (int i = 0; i < 5000 && getppid() == self; i++) nanosleep(&tick, NULL);
      kill(parent, SIGTERM);
      _exit(0);
    }
    return 5;
  }
  if (argc > 1 && !strcmp(argv[1], "restop")) {
    signal(SIGCONT, count);
    for (int i = 0; i < 5; i++) raise(SIGSTOP);
    printf("continued %d\n", (int)handled);
    return 4;
  }
  if (argc > 1 && (!strcmp(argv[1], "stop") || !strcmp(argv[1], "stopcont"))) {
    printf("stopping\n");
    fflush(stdout);
    pid_t self = getpid();
    if (!strcmp(argv[1], "stopcont") && fork() == 0) {
      struct timespec wait = {0, 200 * 1000 * 1000};
      nanosleep(&wait, NULL);
      kill(self, SIGCONT);
      _exit(0);
    }
    raise(SIGSTOP);
    printf("resumed\n");
    return 4;
  }
  return 64;
}
