// Every way a traced program can end, each after make_blocks() has made 5,000 blocks of 1,000
// bytes that stay live. The mode is argv[1]:
//   exit, _exit, abort, segv, kill    end that way
//   exec PROGRAM                      exec PROGRAM (with the rest of argv) after the blocks
//   exec-fails                        an exec that fails, then 3,000 more blocks, then exit
//   exec-missing                      an exec of a program that is not there, then 3,000 more
//                                     blocks, then exit
//   exec-fails-thread PROGRAM         an exec that fails, then a new thread that makes 3,000
//                                     more blocks, then exec PROGRAM
//   fdfull                            lowers its descriptor limit to 16, closes every descriptor
//                                     above 2 and opens /dev/null until none is left, then makes
//                                     and frees 400,000 blocks of 1,000 bytes (enough to fill the
//                                     shim's buffer); prints "opened N"
//   stolen FILE                       writes 1 MiB of 'A' to FILE, makes its soft descriptor
//                                     limit (4,096 at most) its hard one, puts FILE on every number
//                                     under it (the shim's too: the trace cannot be opened
//                                     again), then makes and frees 400,000 blocks of 1,000 bytes
//   exec-race PROGRAM                 a thread runs execs that fail, one after another, while
//                                     the main thread, 20 ms on, execs PROGRAM (with the rest
//                                     of argv)
//   worker-exec-fails                 the main thread starts a worker and calls pthread_exit;
//                                     the worker runs an exec that fails, makes 3,000 more
//                                     blocks and returns, the last thread
//   daemon                            daemon(): the parent _exits, the child allocates on
//   closeall FILE                     closes every descriptor above 1 (as daemons do), opens
//                                     FILE, writes 20,000 lines to it while allocating 20,000
//                                     blocks more (enough to fill the shim's buffers), exits
//   dropclose                         run as root, becomes user and group 65534 (as a daemon
//                                     drops its privileges), closes every descriptor above 2
//                                     with close_range, then makes 3,000 more blocks and exits
//   look                              prints the HEAPLINE_* and LD_PRELOAD variables it sees,
//                                     and every descriptor above 2 with its number
//   aligned                           also one aligned_alloc(24, 100), as glibc allows
//   dispositions                      prints every signal whose disposition is not the default,
//                                     then every signal it starts with blocked
//   blocking PROGRAM                  blocks SIGUSR1, SIGUSR2, SIGTERM and SIGRTMIN+1, then execs
//                                     PROGRAM (with the rest of argv), as a supervisor may
//   rename FROM TO                    chdir("/"), then renames its own trace FROM to TO
//   idle                              sleeps 2 s, then prints "wakes N" for each thread but the
//                                     main one: how often it went to sleep (its voluntary
//                                     context switches)
//   errno                             before anything else, an aligned_alloc and 200,000 mallocs
//                                     and frees that each must leave errno at 0; prints how many
//                                     did not, then what a posix_memalign of 2^62 bytes returns
//                                     and leaves in errno
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern char **environ;
static void *blocks[50000];

__attribute__((noinline)) static void make_blocks(int from, int n) {
  for (int i = from; i < from + n; i++) blocks[i] = malloc(1000);
}

static void *more_blocks(void *unused) {
  (void)unused;
  make_blocks(5000, 3000);
  return NULL;
}

static void *failing_execs(void *unused) {
  char *none[] = {"/dev/null", NULL};  // there, but no program: EACCES
  for (;;) execv(none[0], none);
  return unused;
}

static void *exec_fails_then_more_blocks(void *unused) {
  char *none[] = {"/dev/null", NULL};  // there, but no program: EACCES
  execv(none[0], none);
  return more_blocks(unused);
}

static void say(const char *text) {
  ssize_t ignored = write(1, text, strlen(text));
  (void)ignored;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "exit";
  if (!strcmp(mode, "fdfull")) {
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    limit.rlim_cur = 16;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 124;
    for (int fd = 3; fd < 1024; fd++) close(fd);
    int opened = 0;
    while (open("/dev/null", O_RDONLY) >= 0) opened++;
    for (int i = 0; i < 400000; i++) free(malloc(1000));
    printf("opened %d\n", opened);
    return 0;
  }
  if (!strcmp(mode, "stolen") && argc > 2) {
    int fd = open(argv[2], O_RDWR | O_CREAT | O_TRUNC, 0644);
    char data[4096];
    memset(data, 'A', sizeof data);
    for (int i = 0; i < 256; i++)
      if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data) return 122;
    struct rlimit limit;
    getrlimit(RLIMIT_NOFILE, &limit);
    if (limit.rlim_cur > 4096) limit.rlim_cur = 4096;  // a loop of a million dup2s, in some CI
    limit.rlim_max = limit.rlim_cur;
    if (setrlimit(RLIMIT_NOFILE, &limit) != 0) return 124;
    // From the top down, so that a trace opened again meanwhile takes a number still to come.
    // EBUSY: the number was being given to an open meanwhile (the shim's thread reads /proc).
    for (int n = (int)limit.rlim_cur - 1; n >= 3; n--)
      while (n != fd && dup2(fd, n) != n)
        if (errno != EBUSY) return 123;
    for (int i = 0; i < 400000; i++) free(malloc(1000));
    return 0;
  }
  if (!strcmp(mode, "errno")) {
    int changed = 0;
    errno = 0;
    void *first = aligned_alloc(24, 48);
    changed += errno != 0;
    free(first);
    for (int i = 0; i < 100000; i++) {
      errno = 0;
      void *p = malloc((size_t)(i % 5000) + 1);
      changed += errno != 0;
      errno = 0;
      free(p);
      changed += errno != 0;
    }
    errno = 0;
    void *huge;
    int failed = posix_memalign(&huge, 64, (size_t)1 << 62);
    printf("errno changed %d times\nposix_memalign %d, errno %d\n", changed, failed, errno);
    return 0;
  }
  make_blocks(0, 5000);
  if (!strcmp(mode, "_exit")) _exit(3);
  if (!strcmp(mode, "abort")) abort();
  if (!strcmp(mode, "segv")) raise(SIGSEGV);
  if (!strcmp(mode, "kill")) raise(SIGKILL);
  if (!strcmp(mode, "exec") && argc > 2) {
    execv(argv[2], argv + 2);
    return 120;
  }
  if (!strcmp(mode, "exec-fails")) {
    char *none[] = {"/dev/null", NULL};  // there, but no program: EACCES
    execv(none[0], none);
    make_blocks(5000, 3000);
    return 0;
  }
  if (!strcmp(mode, "exec-missing")) {
    char *none[] = {"/nonexistent/program", NULL};
    execv(none[0], none);
    make_blocks(5000, 3000);
    return 0;
  }
  if (!strcmp(mode, "exec-fails-thread") && argc > 2) {
    char *none[] = {"/dev/null", NULL};  // there, but no program: EACCES
    execv(none[0], none);
    pthread_t thread;
    if (pthread_create(&thread, NULL, more_blocks, NULL) || pthread_join(thread, NULL)) return 122;
    execv(argv[2], argv + 2);
    return 123;
  }
  if (!strcmp(mode, "exec-race") && argc > 2) {
    pthread_t failing;
    if (pthread_create(&failing, NULL, failing_execs, NULL)) return 122;
    struct timespec pause = {0, 20 * 1000 * 1000};
    nanosleep(&pause, NULL);
    execv(argv[2], argv + 2);
    return 123;
  }
  if (!strcmp(mode, "worker-exec-fails")) {
    pthread_t worker;
    if (pthread_create(&worker, NULL, exec_fails_then_more_blocks, NULL)) return 122;
    pthread_exit(NULL);
  }
  if (!strcmp(mode, "daemon")) {
    if (daemon(1, 1) != 0) return 121;
    make_blocks(5000, 3000);  // the daemon's own: not traced, as no child is
    return 0;
  }
  if (!strcmp(mode, "dropclose")) {
    if (setgroups(0, NULL) != 0 || setgid(65534) != 0 || setuid(65534) != 0) return 121;
    if (close_range(3, ~0U, 0) != 0) return 122;
    make_blocks(5000, 3000);
    return 0;
  }
  if (!strcmp(mode, "closeall") && argc > 2) {
    for (int fd = 2; fd < 4096; fd++) close(fd);  // its stderr too: the file takes number 2
    int out = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out < 0) return 122;
    char line[32];
    for (int i = 0; i < 20000; i++) {
      blocks[5000 + i] = malloc(1000);
      int n = snprintf(line, sizeof line, "line %d\n", i);
      if (write(out, line, (size_t)n) != n) return 123;
    }
    close(out);
    return 0;
  }
  if (!strcmp(mode, "look")) {
    for (char **e = environ; *e; e++)
      if (!strncmp(*e, "HEAPLINE_", 9) || !strncmp(*e, "LD_PRELOAD=", 11)) printf("env %s\n", *e);
    DIR *dir = opendir("/proc/self/fd");
    for (struct dirent *d; dir && (d = readdir(dir));) {
      int fd = atoi(d->d_name);
      if (d->d_name[0] != '.' && fd > 2 && fd != dirfd(dir))
        printf("fd %d cloexec %d\n", fd, (fcntl(fd, F_GETFD) & FD_CLOEXEC) != 0);
    }
    if (dir) closedir(dir);
    return 0;
  }
  if (!strcmp(mode, "rename") && argc > 3) {
    if (chdir("/") != 0 || rename(argv[2], argv[3]) != 0) return 125;
    make_blocks(5000, 1000);
    return 0;
  }
  if (!strcmp(mode, "dispositions")) {
    for (int sig = 1; sig < 65; sig++) {
      struct sigaction action;
      if (sigaction(sig, NULL, &action) == 0 && action.sa_handler != SIG_DFL)
        printf("signal %d %s\n", sig, action.sa_handler == SIG_IGN ? "ignored" : "handled");
    }
    sigset_t blocked;
    sigprocmask(SIG_SETMASK, NULL, &blocked);
    for (int sig = 1; sig < 65; sig++)
      if (sigismember(&blocked, sig)) printf("blocked %d\n", sig);
    return 0;
  }
  if (!strcmp(mode, "blocking") && argc > 2) {
    sigset_t blocked;
    sigemptyset(&blocked);
    int signals[] = {SIGUSR1, SIGUSR2, SIGTERM, SIGRTMIN + 1};
    for (int i = 0; i < 4; i++) sigaddset(&blocked, signals[i]);
    sigprocmask(SIG_BLOCK, &blocked, NULL);
    execv(argv[2], argv + 2);
    return 127;
  }
  if (!strcmp(mode, "idle")) {
    struct timespec pause = {2, 0};
    while (nanosleep(&pause, &pause) != 0) {}
    DIR *dir = opendir("/proc/self/task");
    for (struct dirent *d; dir && (d = readdir(dir));) {
      if (d->d_name[0] == '.' || atoi(d->d_name) == getpid()) continue;
      char path[64], line[256];
      snprintf(path, sizeof path, "/proc/self/task/%s/status", d->d_name);
      FILE *status = fopen(path, "r");
      while (status && fgets(line, sizeof line, status))
        if (!strncmp(line, "voluntary_ctxt_switches:", 24)) printf("wakes %ld\n", atol(line + 24));
      if (status) fclose(status);
    }
    if (dir) closedir(dir);
    return 0;
  }
  if (!strcmp(mode, "aligned")) {
    void *p = aligned_alloc(24, 100);
    say(p ? "aligned ok\n" : "aligned NULL\n");
    return p ? 0 : 124;
  }
  return 0;
}
