// Stopping the world with ptrace, as LeakSanitizer does. A helper task shares the process's
// memory (clone with CLONE_VM, but a thread group of its own, so that it may trace the
// process's threads): it attaches to every thread but the scanning one, interrupts it, reads its
// registers into its slot, and tells the scanner; once the scan is done it detaches them all.
// Unlike a signal, a ptrace stop runs no code in the stopped thread: a sleep or a poll in
// progress is not cut short with EINTR, and threads that block every signal (libdispatch's
// workers block most) stop like the others.
//
// The helper runs on the scanner's TLS (clone without CLONE_SETTLS), which the scanner keeps
// using meanwhile, so it makes only raw system calls: a glibc wrapper may set errno there.
// When ptrace is not allowed (a debugger is attached, or a sandbox forbids it), the caller
// falls back to signals (stopworld.c).
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "leakscan.h"

enum { HL_TRACER_STACK = 256 * 1024, HL_MAX_TRACED = 8192 };
enum { HL_IDLE = 0, HL_GO = 1, HL_STOPPED = 2, HL_RESUME = 3, HL_DONE = 4, HL_FAILED = -1 };

static struct {
  _Atomic int phase;
  int32_t tgid, self;
  uint32_t count;
  int32_t tids[HL_MAX_TRACED];
  int signals[HL_MAX_TRACED];  // a signal the thread was stopped with, to deliver on detach
} hl_trace;
static uint8_t *hl_tracer_stack;
static pid_t hl_tracer;

static long sys6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;  // -errno on failure
}
#define sys4(n, a, b, c, d) sys6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

static void set_phase(int phase) {
  atomic_store(&hl_trace.phase, phase);
  sys4(SYS_futex, &hl_trace.phase, FUTEX_WAKE, INT32_MAX, 0);
}

static void wait_while(int phase) {
  while (atomic_load(&hl_trace.phase) == phase)
    sys4(SYS_futex, &hl_trace.phase, FUTEX_WAIT, phase, 0);
}

// Attaches to `tid` and waits until it stops; 1 when stopped, 0 when it is gone, -1 when
// ptrace is refused.
static int attach(int32_t tid, int *signal) {
  long r = sys4(SYS_ptrace, PTRACE_SEIZE, tid, 0, 0);
  if (r == -ESRCH) return 0;
  if (r < 0) return -1;
  sys4(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
  for (;;) {
    int status = 0;
    r = sys4(SYS_wait4, tid, &status, __WALL, 0);
    if (r == -EINTR) continue;
    if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status)) return 0;
    if (!WIFSTOPPED(status)) continue;
    // The interrupt's own stop, or a signal's that came first: then the signal is given back
    // when the thread is let go.
    int event = status >> 16, sig = WSTOPSIG(status);
    *signal = event == 0 && sig != SIGTRAP && sig != SIGSTOP ? sig : 0;
    return 1;
  }
}

static void read_registers(int32_t tid, struct hl_thread_state *t) {
  struct user_regs_struct regs;
  struct user_fpregs_struct fp;
  if (sys4(SYS_ptrace, PTRACE_GETREGS, tid, 0, &regs) == 0) {
    memcpy(t->regs, &regs, 23 * sizeof(uint64_t));  // r15 ... rsp, ss, fs_base, gs_base
    t->sp = regs.rsp;
    t->tp = regs.fs_base;
  }
  if (sys4(SYS_ptrace, PTRACE_GETFPREGS, tid, 0, &fp) == 0)
    memcpy(&t->regs[23], fp.xmm_space, 16 * 16);
}

struct hl_dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

// Attaches to the threads not attached yet; returns how many, or -1 when ptrace is refused.
static int attach_new_threads(struct hl_thread_state *(*slot_for)(int32_t tid)) {
  char path[40] = "/proc/", digits[16];
  size_t n = 6;
  int d = 0;
  for (int32_t v = hl_trace.tgid; v > 0 && d < 15; v /= 10) digits[d++] = (char)('0' + v % 10);
  while (d > 0) path[n++] = digits[--d];
  memcpy(path + n, "/task", 6);
  long fd = sys4(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return -1;
  char buf[4096];
  int fresh = 0;
  long got;
  while ((got = sys4(SYS_getdents64, fd, buf, sizeof buf, 0)) > 0) {
    for (long at = 0; at < got;) {
      const struct hl_dirent64 *e = (const struct hl_dirent64 *)(buf + at);
      at += e->reclen;
      int32_t tid = 0;
      for (const char *c = e->name; *c >= '0' && *c <= '9'; c++) tid = tid * 10 + (*c - '0');
      int known = 0;
      for (uint32_t i = 0; i < hl_trace.count && !known; i++) known = hl_trace.tids[i] == tid;
      if (tid <= 0 || tid == hl_trace.self || known || hl_trace.count == HL_MAX_TRACED) continue;
      int signal = 0, stopped = attach(tid, &signal);
      if (stopped < 0) {
        sys4(SYS_close, fd, 0, 0, 0);
        return -1;
      }
      struct hl_thread_state *t = slot_for(tid);
      if (!t) continue;
      if (!stopped) {
        t->stopped = HL_THREAD_GONE;
        continue;
      }
      hl_trace.tids[hl_trace.count] = tid;
      hl_trace.signals[hl_trace.count++] = signal;
      read_registers(tid, t);
      t->stopped = HL_THREAD_STOPPED;
      fresh++;
    }
  }
  sys4(SYS_close, fd, 0, 0, 0);
  return fresh;
}

static void detach_all(void) {
  for (uint32_t i = 0; i < hl_trace.count; i++)
    sys4(SYS_ptrace, PTRACE_DETACH, hl_trace.tids[i], 0, hl_trace.signals[i]);
  hl_trace.count = 0;
}

static int tracer_main(void *arg) {
  struct hl_thread_state *(*slot_for)(int32_t) = (struct hl_thread_state * (*)(int32_t)) arg;
  wait_while(HL_IDLE);
  for (;;) {  // until a look at the thread list finds none it has not stopped
    int fresh = attach_new_threads(slot_for);
    if (fresh < 0) {
      detach_all();
      set_phase(HL_FAILED);
      return 1;
    }
    if (!fresh) break;
  }
  set_phase(HL_STOPPED);
  wait_while(HL_STOPPED);
  detach_all();
  set_phase(HL_DONE);
  return 0;
}

int hl_ptrace_stop(int32_t self, struct hl_thread_state *(*slot_for)(int32_t tid)) {
  if (!hl_tracer_stack && !(hl_tracer_stack = hl_map(HL_TRACER_STACK))) return ENOMEM;
  memset(&hl_trace, 0, sizeof hl_trace);
  hl_trace.tgid = getpid();
  hl_trace.self = self;
  // No exit signal: the helper is no child that the program's SIGCHLD handler or wait() sees.
  pid_t pid = clone(tracer_main, hl_tracer_stack + HL_TRACER_STACK,
                    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, (void *)slot_for);
  if (pid < 0) return errno;
  prctl(PR_SET_PTRACER, pid, 0, 0, 0);  // under Yama's ptrace_scope 1; refused without Yama
  set_phase(HL_GO);
  wait_while(HL_GO);
  if (atomic_load(&hl_trace.phase) == HL_FAILED) {
    int status;
    while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR) {}
    return EPERM;
  }
  hl_tracer = pid;
  return 0;
}

void hl_ptrace_resume(void) {
  set_phase(HL_RESUME);
  wait_while(HL_RESUME);
  int status;
  while (waitpid(hl_tracer, &status, __WALL) < 0 && errno == EINTR) {}
  prctl(PR_SET_PTRACER, 0, 0, 0, 0);
  hl_tracer = 0;
}
