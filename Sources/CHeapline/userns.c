// unshare and setns calls that the kernel refuses a process of more than one thread (EINVAL):
// a new user namespace, unsharing what threads share (CLONE_VM, CLONE_SIGHAND, CLONE_THREAD),
// and joining a mount namespace (the filesystem root and directory must be the caller's
// alone). The shim's own thread made every traced program one, and `unshare -U`, `nsenter -m`,
// bubblewrap and rootless containers failed under it. The thread is stopped for the call and
// started again after it. A program with threads of its own fails as it would untraced.
#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

// The call, with the shim's thread stopped when `alone` asks for it. A joined thread is still
// the process's for a moment after pthread_join returns (the kernel wakes the joiner before it
// takes the thread out of the group), and the call fails meanwhile: tried again, 20 ms at most.
static long without_shim_thread(long nr, long a, long b, int alone) {
  int paused = alone && hl_sampler_pause();
  long r = syscall(nr, a, b);
  for (int i = 0; paused && r < 0 && errno == EINVAL && i < 20; i++) {
    struct timespec pause = {0, 1000 * 1000};
    nanosleep(&pause, NULL);
    r = syscall(nr, a, b);
  }
  int saved_errno = errno;
  if (paused) hl_sampler_resume();
  errno = saved_errno;
  return r;
}

int unshare(int flags) {
  int alone = (flags & (CLONE_NEWUSER | CLONE_VM | CLONE_SIGHAND | CLONE_THREAD)) != 0;
  return (int)without_shim_thread(SYS_unshare, flags, 0, alone);
}

// A type of 0 joins whatever namespace the descriptor names; a namespace of a process (a pidfd)
// may be several at once.
int setns(int fd, int type) {
  int alone = type == 0 || (type & (CLONE_NEWUSER | CLONE_NEWNS)) != 0;
  return (int)without_shim_thread(SYS_setns, fd, type, alone);
}
