// Ground truth for `heapline record --rotate`. `rotating TRACE exit|kill`, TRACE being the path
// given to -o. Each phase waits until the recorder's next file exists, then runs at once, so it
// lands whole in that file (a period lasts a second; a phase takes microseconds):
//   file 1: phase_one    100 × 4,096 B, kept
//   file 2: phase_two     50 × 1,024 B; the first 30 of phase one's blocks freed
//   file 3: phase_three   20 × 256 B; the first 10 of phase two's blocks freed
// then it exits 0 ("exit"), printing "usable A B C", the usable sizes of the three phases'
// blocks (for a sampled recording's live usable bytes), or kills itself with SIGKILL ("kill"). A phase that did not end in the
// file it began in (the machine stopped the program for a whole period) exits 75 and says so.
// "fork" is "exit" with a child forked after phase one that makes 500 × 3,000 B, waits until the
// parent's file 3 exists, makes 500 more and exits through exit(): none of it may reach a trace.
// It calls nothing that allocates but its own mallocs: no stdio, no opendir.
#include <fcntl.h>
#include <malloc.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static char directory[4096], stem[4096];

// The highest sequence number among STEM.NNNN-….trace in the directory, read with getdents64
// into a buffer on the stack.
static int highest_file(void) {
  int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[8192];
  int best = 0;
  size_t n = strlen(stem);
  long got;
  while ((got = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < got;) {
      unsigned short reclen;
      memcpy(&reclen, buffer + at + 16, 2);
      const char *name = buffer + at + 19;
      if (strncmp(name, stem, n) == 0 && name[n] == '.') {
        int seq = atoi(name + n + 1);
        if (seq > best) best = seq;
      }
      at += reclen;
    }
  }
  close(fd);
  return best;
}

// Waits until file `k` exists: at most 60 s, polled every millisecond.
static void wait_for_file(int k) {
  for (int i = 0; i < 60000; i++) {
    if (highest_file() >= k) return;
    struct timespec pause = {0, 1000000};
    nanosleep(&pause, NULL);
  }
  static const char msg[] = "rotating: the recorder never started the next file\n";
  write(2, msg, sizeof msg - 1);
  _exit(74);
}

static void check_still_in(int k) {
  if (highest_file() == k) return;
  static const char msg[] = "rotating: a phase ran across two files\n";
  write(2, msg, sizeof msg - 1);
  _exit(75);
}

static void *one[100], *two[50], *three[20];
static void *volatile sink;  // the child's blocks, kept from the optimizer

__attribute__((noinline)) static void phase_one(void) {
  for (int i = 0; i < 100; i++) one[i] = malloc(4096);
}

__attribute__((noinline)) static void phase_two(void) {
  for (int i = 0; i < 50; i++) two[i] = malloc(1024);
  for (int i = 0; i < 30; i++) free(one[i]);
}

__attribute__((noinline)) static void phase_three(void) {
  for (int i = 0; i < 20; i++) three[i] = malloc(256);
  for (int i = 0; i < 10; i++) free(two[i]);
}

static void put_number(char *line, size_t *at, size_t n) {
  char digits[24];
  int k = 0;
  do digits[k++] = (char)('0' + n % 10); while (n /= 10);
  line[(*at)++] = ' ';
  while (k) line[(*at)++] = digits[--k];
}

int main(int argc, char **argv) {
  if (argc < 3) return 2;
  const char *path = argv[1];
  const char *slash = strrchr(path, '/');
  size_t dir_len = slash ? (size_t)(slash - path) : 1;
  memcpy(directory, slash ? path : ".", dir_len);
  strcpy(stem, slash ? slash + 1 : path);
  size_t len = strlen(stem);
  if (len > 6 && strcmp(stem + len - 6, ".trace") == 0) stem[len - 6] = 0;

  wait_for_file(1);
  phase_one();
  check_still_in(1);
  pid_t child = strcmp(argv[2], "fork") == 0 ? fork() : -1;
  if (child == 0) {
    for (int i = 0; i < 500; i++) sink = malloc(3000);
    wait_for_file(3);
    for (int i = 0; i < 500; i++) sink = malloc(3000);
    exit(0);
  }
  wait_for_file(2);
  phase_two();
  check_still_in(2);
  wait_for_file(3);
  phase_three();
  check_still_in(3);
  if (strcmp(argv[2], "kill") == 0) raise(SIGKILL);
  int status = 0;
  if (child > 0 && (waitpid(child, &status, 0) != child || status != 0)) return 3;
  char line[128] = "usable";
  size_t at = 6;
  put_number(line, &at, malloc_usable_size(one[99]));
  put_number(line, &at, malloc_usable_size(two[49]));
  put_number(line, &at, malloc_usable_size(three[19]));
  line[at++] = '\n';
  write(1, line, at);
  return 0;
}
