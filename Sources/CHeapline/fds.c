// The shim's descriptors sit at the top of the program's range, close-on-exec, so that the
// program's own open() calls get the numbers they would get untraced, and a program that closes
// "every descriptor above 2" and opens files of its own never gets one the shim writes to.
#include <fcntl.h>
#include <sys/resource.h>
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
static int park_pipe(int fds[2], int flags) {
  long r = syscall(SYS_pipe2, fds, flags);
  if (r != 0 || !hl_tls.unwinding) return (int)r;
  fds[0] = hl_fd_park(fds[0]);
  fds[1] = hl_fd_park(fds[1]);
  return 0;
}

int pipe(int fds[2]) { return park_pipe(fds, 0); }
int pipe2(int fds[2], int flags) { return park_pipe(fds, flags); }
