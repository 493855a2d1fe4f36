// The shim's descriptors sit at the top of the program's range, close-on-exec, so that the
// program's own open() calls get the numbers they would get untraced, and a program that closes
// "every descriptor above 2" and opens files of its own never gets one the shim writes to.
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

// Moves `fd` to the highest free number below min(RLIMIT_NOFILE, 1024), close-on-exec, and
// returns the new number; returns `fd` itself when no higher number is free. 1024 keeps the
// kernel's descriptor table small for programs whose limit is in the millions.
int hl_fd_park(int fd) {
  struct rlimit limit;
  long top = 1024;
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < (rlim_t)top)
    top = (long)limit.rlim_cur;
  for (long want = top - 1; want > fd && want >= top - 64; want--) {
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)want);  // the lowest free number >= want
    if (high < 0) continue;
    if (high < top) {
      close(fd);
      return high;
    }
    close(high);  // above the range: `want` itself was taken
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}

// libunwind opens a pipe when it starts (to check that memory is readable, it writes a byte of
// it there) and keeps it for good. Opened by the program's lowest free numbers, it would be
// written to after the program closed and reused them: so while the shim is unwinding, pipes
// are parked too. Every other pipe is the program's, untouched.
// Parked, its numbers may still be taken by a program that puts files of its own on every
// number (dup2): libunwind then read a byte of the program's file and wrote one of memory into
// it at every check (a tester's 64 KiB file had 2,001 bytes overwritten and its offset moved),
// and closes them when a read fails. So the pipe is remembered, and hl_unwind_pipe_intact
// says whether libunwind may be called.
static struct {
  _Atomic int lock;
  int made;
  int fd[2];
  dev_t dev[2];
  ino_t ino[2];
} hl_unwind_pipe;

static int park_pipe(int fds[2], int flags) {
  long r = syscall(SYS_pipe2, fds, flags);
  if (r != 0 || !hl_tls.unwinding) return (int)r;
  struct stat st[2];
  fds[0] = hl_fd_park(fds[0]);
  fds[1] = hl_fd_park(fds[1]);
  int known = fstat(fds[0], &st[0]) == 0 && fstat(fds[1], &st[1]) == 0;
  hl_spin_lock(&hl_unwind_pipe.lock);
  hl_unwind_pipe.made = known ? 1 : -1;  // -1: never to be trusted
  for (int i = 0; i < 2 && known; i++) {
    hl_unwind_pipe.fd[i] = fds[i];
    hl_unwind_pipe.dev[i] = st[i].st_dev;
    hl_unwind_pipe.ino[i] = st[i].st_ino;
  }
  hl_spin_unlock(&hl_unwind_pipe.lock);
  return 0;
}

// Whether libunwind's pipe, if it has made one, is still its own, or closed (a daemon closes
// every descriptor: libunwind then makes a new one, parked and remembered here). Once taken
// for a file of the program's, libunwind is not called again (what it would have unwound is
// left out), and the shim says so once.
int hl_unwind_pipe_intact(void) {
  static _Atomic int broken;
  if (atomic_load_explicit(&broken, memory_order_relaxed)) return 0;
  hl_spin_lock(&hl_unwind_pipe.lock);
  int ok = hl_unwind_pipe.made >= 0, closed = 0;
  for (int i = 0; i < 2 && ok && hl_unwind_pipe.made; i++) {
    struct stat st;
    int found = fstat(hl_unwind_pipe.fd[i], &st) == 0, gone = !found && errno == EBADF;
    closed += gone;
    ok = gone ||
         (found && st.st_dev == hl_unwind_pipe.dev[i] && st.st_ino == hl_unwind_pipe.ino[i]);
  }
  if (closed == 1) ok = 0;  // one end closed and the other kept: not libunwind's doing
  hl_spin_unlock(&hl_unwind_pipe.lock);
  if (!ok && !atomic_exchange(&broken, 1))
    hl_log("the program took the descriptors of libunwind's pipe: frames that only libunwind "
           "can unwind are left out from now on", NULL);
  return ok;
}

// Whether `fd` is open on the file (`dev`, `ino`): a program may have put a file of its own on a
// number the shim keeps.
int hl_fd_names(int fd, dev_t dev, ino_t ino) {
  struct stat st;
  return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == dev && st.st_ino == ino;
}

int pipe(int fds[2]) { return park_pipe(fds, 0); }
int pipe2(int fds[2], int flags) { return park_pipe(fds, flags); }

// close_range and closefrom spare the trace's descriptor. A daemon that drops its privileges
// (setuid, chroot) and then closes every descriptor left the shim unable to open the trace
// again: the recording stopped, and what it held was lost. close() of that one number is not
// spared: the shim opens the trace again by its path, as before.
static int close_span(unsigned first, unsigned last, int flags) {
  return (int)syscall(SYS_close_range, first, last, flags);
}

int close_range(unsigned first, unsigned last, int flags) {
  int keep = flags & CLOSE_RANGE_CLOEXEC ? -1 : hl_writer_descriptor();
  if (keep < 0 || (unsigned)keep < first || (unsigned)keep > last)
    return close_span(first, last, flags);
  int r = (unsigned)keep > first ? close_span(first, (unsigned)keep - 1, flags) : 0;
  // The table is the process's own after the first span, when that asked for it
  int rest = (unsigned)keep > first ? flags & ~CLOSE_RANGE_UNSHARE : flags;
  if (r == 0 && (unsigned)keep < last) r = close_span((unsigned)keep + 1, last, rest);
  if (r == 0 && (unsigned)keep == first && first == last && (flags & CLOSE_RANGE_UNSHARE))
    r = close_span(first, first, CLOSE_RANGE_UNSHARE | CLOSE_RANGE_CLOEXEC);
  return r;
}

// glibc's closefrom falls back to closing what /proc/self/fd lists when close_range fails
// (Linux before 5.9): so does this one, to the limit on descriptors.
void closefrom(int lowest) {
  unsigned first = lowest < 0 ? 0 : (unsigned)lowest;
  int saved_errno = errno;
  if (close_range(first, ~0U, 0) != 0) {
    struct rlimit limit;
    long top = getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < 65536 ? (long)limit.rlim_cur : 65536;
    int keep = hl_writer_descriptor();
    for (long fd = first; fd < top; fd++)
      if (fd != keep) close((int)fd);
  }
  errno = saved_errno;
}
