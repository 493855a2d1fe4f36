// The shim's descriptors sit at the top of the program's range, so that the program's own
// open() calls get the numbers they would get untraced.
#include <fcntl.h>
#include <sys/resource.h>
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
    int high = fcntl(fd, F_DUPFD_CLOEXEC, (int)want);
    if (high < 0) continue;  // taken: F_DUPFD found nothing free from `want` up
    close(fd);
    return high;
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return fd;
}
