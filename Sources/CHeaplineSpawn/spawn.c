// fork, PR_SET_PDEATHSIG and exec, with exec's errno sent back through a close-on-exec pipe,
// and the handlers that forward termination signals to the program.
#define _GNU_SOURCE  // pipe2
#include "heapline_spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

// Every signal that ends a process unless caught, but those the kernel sends a process for its
// own doing (a crash, a limit passed, a write past the file size limit) and glibc's own two
// (32 and 33): sent to `record`, each is meant for the program. Only SIGINT, SIGTERM, SIGHUP
// and SIGQUIT were passed on, and any other (SIGUSR1 for a program's own handler, or the
// program's kill(0, SIGUSR1) that it ignores itself) killed `record`, which took the program
// with it and left a trace with nothing in it. SIGTSTP is passed on too: the program stops,
// and `record` then stops with it (hl_spawn_wait).
static int hl_forwarded[64], hl_forwarded_count;
static struct sigaction hl_previous[64];
static volatile sig_atomic_t hl_child, hl_ended;
static int hl_installed;
static struct sigaction hl_file_size_previous, hl_pipe_previous;
static int hl_file_size_ignored, hl_pipe_ignored;

static void list_forwarded(void) {
  if (hl_forwarded_count) return;
  static const int ending[] = {SIGHUP,  SIGINT,  SIGQUIT,   SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM,
                               SIGTERM, SIGSTKFLT, SIGVTALRM, SIGPROF, SIGIO,   SIGPWR,  SIGTSTP};
  for (unsigned i = 0; i < sizeof ending / sizeof ending[0]; i++)
    hl_forwarded[hl_forwarded_count++] = ending[i];
  for (int sig = SIGRTMIN; sig <= SIGRTMAX && hl_forwarded_count < 64; sig++)
    hl_forwarded[hl_forwarded_count++] = sig;
}

static int ignore(int signal, struct sigaction *previous) {
  struct sigaction ignore = {0};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  return sigaction(signal, &ignore, previous) == 0;
}

void hl_spawn_ignore_file_size_signal(void) {
  hl_file_size_ignored = ignore(SIGXFSZ, &hl_file_size_previous);
}

void hl_spawn_ignore_pipe_signal(void) { hl_pipe_ignored = ignore(SIGPIPE, &hl_pipe_previous); }

// The signal mask this process was started with, which the program gets: what its parent
// blocked for it (a supervisor, a design around sigwait) stays blocked, whatever the thread
// that starts it blocks; only the signals that `record` asks the program to take are let in.
static sigset_t hl_mask_given;
static int hl_mask_kept;

void hl_spawn_keep_signal_mask(void) {
  hl_mask_kept = pthread_sigmask(SIG_SETMASK, NULL, &hl_mask_given) == 0;
}

// The descriptor limit the commands were started with, when they raised it for themselves.
static struct rlimit hl_files_given;
static int hl_files_raised;

void hl_spawn_raise_file_limit(unsigned long floor) {
  struct rlimit now;
  if (getrlimit(RLIMIT_NOFILE, &now) != 0 || now.rlim_cur >= floor) return;
  struct rlimit raised = now;
  raised.rlim_cur = now.rlim_max > floor ? floor : now.rlim_max;  // RLIM_INFINITY is the largest
  if (raised.rlim_cur > now.rlim_cur && setrlimit(RLIMIT_NOFILE, &raised) == 0) {
    hl_files_given = now;
    hl_files_raised = 1;
  }
}

static void hl_forward(int signal, siginfo_t *info, void *context) {
  (void)context;
  int terminal = info && info->si_code == SI_KERNEL;
  if (hl_ended) {  // but ^C from the terminal still ends this process, as it finishes
    struct sigaction taken = {0};
    taken.sa_handler = SIG_DFL;
    sigemptyset(&taken.sa_mask);
    if (terminal && sigaction(signal, &taken, NULL) == 0) raise(signal);
    return;
  }
  // The terminal signals the whole foreground process group, the program included: passing
  // ^C on again would deliver it twice. A SIGPIPE from this process's own write to a closed
  // pipe is the kernel's too, though it says it was sent by this process.
  if (terminal) return;
  if (info && signal == SIGPIPE && info->si_code == SI_USER && info->si_pid == getpid()) return;
  pid_t child = hl_child;
  // One the program sent (to its process group, which it is in) has reached it already. Once
  // it has ended, there is nothing to pass on: this process finishes the trace, and exits with
  // the program's status, which a late signal no longer replaces.
  if (child > 0 && !(info && info->si_code == SI_USER && info->si_pid == child)) kill(child, signal);
}

void hl_spawn_forward_signals(void) {
  if (hl_installed) return;
  list_forwarded();
  struct sigaction action = {0};
  action.sa_sigaction = hl_forward;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < hl_forwarded_count; i++)
    sigaction(hl_forwarded[i], &action, &hl_previous[i]);
  hl_installed = 1;
}

void hl_spawn_program_ended(void) {
  hl_child = 0;
  hl_ended = 1;
}

// In the child, between fork and exec: async-signal-safe calls only.
static void hl_exec_child(const char *path, char *const argv[], char *const envp[],
                          const int *deliver, int delivered, int report, pid_t parent) {
  // SIGKILL, since the program may catch or ignore anything else. A parent that died before
  // this call is caught by the getppid check.
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(125);
  for (int i = 0; i < hl_forwarded_count; i++) {
    if (hl_installed) sigaction(hl_forwarded[i], &hl_previous[i], NULL);
  }
  if (hl_file_size_ignored) sigaction(SIGXFSZ, &hl_file_size_previous, NULL);
  if (hl_pipe_ignored) sigaction(SIGPIPE, &hl_pipe_previous, NULL);
  if (hl_files_raised) setrlimit(RLIMIT_NOFILE, &hl_files_given);
  sigset_t mask;
  if (hl_mask_kept) mask = hl_mask_given;
  else sigemptyset(&mask);
  for (int i = 0; i < delivered; i++) sigdelset(&mask, deliver[i]);
  sigprocmask(SIG_SETMASK, &mask, NULL);
  execve(path, argv, envp);
  int err = errno;
  while (write(report, &err, sizeof err) < 0 && errno == EINTR) {
  }
  _exit(127);
}

pid_t hl_spawn(const char *path, char *const argv[], char *const envp[], const int *deliver,
               int delivered, int *exec_failed) {
  *exec_failed = 0;
  int report[2];
  if (pipe2(report, O_CLOEXEC) != 0) return -errno;
  // Blocked across the fork, so that a signal in between waits until the pid is known.
  sigset_t forwarded, previous;
  sigemptyset(&forwarded);
  for (int i = 0; i < hl_forwarded_count; i++) sigaddset(&forwarded, hl_forwarded[i]);
  pthread_sigmask(SIG_BLOCK, &forwarded, &previous);
  pid_t parent = getpid();
  pid_t pid = fork();
  if (pid == 0) {
    close(report[0]);
    hl_exec_child(path, argv, envp, deliver, delivered, report[1], parent);
  }
  int fork_error = errno;
  close(report[1]);
  if (pid > 0) hl_child = pid;
  pthread_sigmask(SIG_SETMASK, &previous, NULL);
  if (pid < 0) {
    close(report[0]);
    return -fork_error;
  }
  int err = 0;
  ssize_t n;
  while ((n = read(report[0], &err, sizeof err)) < 0 && errno == EINTR) {
  }
  close(report[0]);
  if (n == (ssize_t)sizeof err) {
    hl_child = 0;
    hl_spawn_wait(pid);
    *exec_failed = 1;
    return -(err ? err : ENOEXEC);
  }
  return pid;
}

// Whether the program is stopped now by a signal (1), not (0), or cannot be told (-1): a stop
// that waitpid reports may be over already (^Z stops the whole group, and `fg` continues it,
// this process too, before it reads the report). A debugger's stop ('t') is the debugger's
// business: this process stopping with it would leave the shell's job stopped after the
// debugger let the program go. Async-signal-safe, with `path` made before.
static int stopped_at(const char *path) {
  char stat[512];
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return -1;
  ssize_t n = read(fd, stat, sizeof stat - 1);
  close(fd);
  if (n <= 0) return -1;
  stat[n] = 0;
  const char *end = strrchr(stat, ')');  // the name may hold anything, ")" included
  return end && end[2] == 'T';
}

// While this process is stopped, only SIGCONT moves it: a child of its own watches the program
// and sends it one when the program goes on or ends without it (another process continued it),
// where this process stayed stopped for ever. Returns the watcher's pid, or -1.
static pid_t watch_while_stopped(const char *path, pid_t parent) {
  pid_t watcher = fork();
  if (watcher != 0) return watcher;
  if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != parent) _exit(0);
  struct timespec pause = {0, 20 * 1000 * 1000};
  while (stopped_at(path) == 1) nanosleep(&pause, NULL);
  kill(parent, SIGCONT);
  _exit(0);
}

// Stops this process as the program was stopped: by SIGTSTP when it was (the shell says
// "Stopped", not "Stopped (signal)"), else by SIGSTOP.
static void stop_as(int signal) {
  if (signal != SIGTSTP) {
    kill(getpid(), SIGSTOP);
    return;
  }
  struct sigaction stop = {0}, forwarding;
  stop.sa_handler = SIG_DFL;
  sigemptyset(&stop.sa_mask);
  sigaction(SIGTSTP, &stop, &forwarding);
  kill(getpid(), SIGTSTP);
  sigaction(SIGTSTP, &forwarding, NULL);
}

// A program that stops (SIGTSTP from `kill`, a raise of SIGSTOP, a read from the terminal in
// the background) stops this process too, so that the shell sees the job stopped and gives the
// terminal back, where it waited for ever; continued (`fg`), this process continues the
// program, unless it went on already (the shell's SIGCONT to the group reached it too): a stop
// of its own after that is a new one, which a SIGCONT from here would have undone.
int hl_spawn_wait(pid_t pid) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
  int status = 0, pending = 0;
  for (;;) {
    if (!pending && waitpid(pid, &status, WUNTRACED) < 0) {
      if (errno != EINTR) return -errno;
      continue;
    }
    pending = 0;
    if (!WIFSTOPPED(status)) return status;
    if (stopped_at(path) == 0) continue;
    pid_t watcher = watch_while_stopped(path, getpid());
    stop_as(WSTOPSIG(status));
    int since;
    pid_t changed;
    while ((changed = waitpid(pid, &since, WNOHANG | WUNTRACED | WCONTINUED)) < 0 && errno == EINTR) {
    }
    if (changed == pid && !WIFCONTINUED(since)) status = since, pending = 1;  // stopped or ended
    else if (changed == 0 && stopped_at(path) == 1) kill(pid, SIGCONT);  // the same stop still
    if (watcher > 0) {
      kill(watcher, SIGKILL);
      while (waitpid(watcher, NULL, 0) < 0 && errno == EINTR) {
      }
    }
  }
}
