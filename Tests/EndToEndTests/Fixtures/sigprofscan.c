// A program with a SIGPROF handler of its own, without SA_RESTART and with SIGUSR1 in its mask,
// whose threads a leak scan stops with signals (recorded with HEAPLINE_STOP_SIGNAL=27, as where
// ptrace is refused). After the scan it prints what sigaction says of its handler, then what a
// read that its own SIGPROF interrupts returns: untraced, "handler mine 1 flags 0 usr1 1" and
// "read -1 errno 4" (EINTR).
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct heapline_leak_summary;
extern int heapline_check_leaks(struct heapline_leak_summary *) __attribute__((weak));

static void on_prof(int sig) { (void)sig; }
static int wake[2], done[2];
static pthread_t main_thread;

static void *poker(void *unused) {
  char c;
  while (read(wake[0], &c, 1) < 0 && errno == EINTR) continue;  // a scan's stop interrupts it
  usleep(200 * 1000);
  pthread_kill(main_thread, SIGPROF);
  usleep(200 * 1000);
  ssize_t ignored = write(done[1], "x", 1);
  (void)ignored;
  return unused;
}

int main(void) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = on_prof;
  sigaddset(&action.sa_mask, SIGUSR1);
  sigaction(SIGPROF, &action, NULL);
  if (pipe(wake) || pipe(done)) return 9;
  main_thread = pthread_self();
  pthread_t thread;
  if (pthread_create(&thread, NULL, poker, NULL)) return 9;
  uint64_t summary[64];  // larger than the API's summary
  if (heapline_check_leaks) heapline_check_leaks((struct heapline_leak_summary *)summary);
  struct sigaction now;
  sigaction(SIGPROF, NULL, &now);
  printf("handler mine %d flags %#x usr1 %d\n", now.sa_handler == on_prof,
         (unsigned)now.sa_flags & ~0x04000000u, sigismember(&now.sa_mask, SIGUSR1));
  ssize_t ignored = write(wake[1], "x", 1);
  (void)ignored;
  char c;
  errno = 0;
  ssize_t r = read(done[0], &c, 1);
  printf("read %zd errno %d\n", r, r < 0 ? errno : 0);
  pthread_join(thread, NULL);
  return 0;
}
