// Stopping the world with ptrace, as LeakSanitizer does. A helper task shares the process's
// memory (clone with CLONE_VM, but a thread group of its own, so that it may trace the
// process's threads): it attaches to every thread but the scanning one, interrupts it, reads its
// registers into its slot, and tells the scanner; once the scan is done it lets them all go.
// Unlike a signal, a ptrace stop runs no code in the stopped thread: a sleep or a poll in
// progress is not cut short with EINTR, and threads that block every signal (libdispatch's
// workers block most) stop like the others.
//
// The helper runs on the scanner's TLS (clone without CLONE_SETTLS), which the scanner keeps
// using meanwhile, so it makes only raw system calls: a glibc wrapper may set errno there.
// When ptrace is not allowed (a debugger is attached, or a sandbox forbids it), the caller
// falls back to signals (stopworld.c).
//
// The helper must never hang the program (issue 8):
// - It is born with every signal blocked. Without CLONE_SIGHAND it has a copy of the program's
//   handlers, and the kernel sends a tracer SIGCHLD whenever a tracee stops: a shell's SIGCHLD
//   handler, reaping with waitpid(-1) in the helper, took the stops that the helper was waiting
//   for (`bash -c 'exit 3'` hung in 9 runs of 100).
// - Every wait has a deadline. A thread that does not stop in time (one in a vfork, waiting in
//   an uninterruptible sleep) is left running and counted as unresponsive: its stack is scanned
//   whole. Threads it leaves attached are let go by the kernel when the helper exits.
// - It dies with the scanning thread (PR_SET_PDEATHSIG), so a program killed during a scan
//   dies at once: otherwise its traced threads could not finish dying until their tracer reaped
//   them, and nothing would reap the helper.
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
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
#include "tasks.h"

enum { HL_TRACER_STACK = 256 * 1024, HL_MAX_TRACED = 8192 };
enum { HL_IDLE = 0, HL_GO = 1, HL_STOPPED = 2, HL_RESUME = 3, HL_DONE = 4, HL_FAILED = -1 };
enum { HL_SEEN_NONE = 0, HL_SEEN_STOP = 1, HL_SEEN_EXIT = 2 };
#define HL_MS ((uint64_t)1000 * 1000)
// A thread has this long to stop once interrupted, as in the signal path; the whole stop has
// HL_ATTACH_NS, and the scanner gives up on a helper that has not answered after HL_HELPER_NS.
#define HL_STOP_NS (500 * HL_MS)
#define HL_ATTACH_NS (2000 * HL_MS)
#define HL_HELPER_NS (HL_ATTACH_NS + HL_STOP_NS + 1000 * HL_MS)
// The longest the world stays stopped for one scan (2,000,000 live blocks take about 0.1 s).
#define HL_HOLD_NS (60000 * HL_MS)

static struct {
  _Atomic int phase;
  int32_t tgid, self;
  uint32_t count, pending;
  int held_too_long;  // the hold's deadline passed: the threads ran before the scan ended
  int32_t tids[HL_MAX_TRACED];
  int signals[HL_MAX_TRACED];  // a signal the thread was stopped with, to deliver on detach
  uint8_t seen[HL_MAX_TRACED];  // HL_SEEN_*
  struct hl_thread_state *(*slot_for)(int32_t tid);
} hl_trace;
static uint8_t *hl_tracer_stack;
static pid_t hl_tracer;

static void set_phase(int phase) {
  atomic_store(&hl_trace.phase, phase);
  hl_raw(SYS_futex, &hl_trace.phase, FUTEX_WAKE, INT32_MAX, 0);
}

static int parent_alive(void) { return hl_raw(SYS_getppid, 0, 0, 0, 0) == hl_trace.tgid; }

// Waits while the phase is `phase`, until `deadline`; returns the phase it ends with. The helper
// also stops waiting when the program is gone.
static int wait_while(int phase, uint64_t deadline, int in_helper) {
  for (;;) {
    int now_phase = atomic_load(&hl_trace.phase);
    uint64_t now = hl_raw_monotonic_ns();
    if (now_phase != phase || now >= deadline || (in_helper && !parent_alive())) return now_phase;
    struct timespec pause = hl_span(deadline - now < 100 * HL_MS ? deadline - now : 100 * HL_MS);
    hl_raw(SYS_futex, &hl_trace.phase, FUTEX_WAIT, phase, &pause);
  }
}

static void read_registers(int32_t tid, struct hl_thread_state *t) {
  struct user_regs_struct regs;
  struct user_fpregs_struct fp;
  if (hl_raw(SYS_ptrace, PTRACE_GETREGS, tid, 0, &regs) == 0) {
    memcpy(t->regs, &regs, 23 * sizeof(uint64_t));  // r15 ... rsp, ss, fs_base, gs_base
    t->sp = regs.rsp;
    t->tp = regs.fs_base;
  }
  if (hl_raw(SYS_ptrace, PTRACE_GETFPREGS, tid, 0, &fp) == 0)
    memcpy(&t->regs[23], fp.xmm_space, 16 * 16);
}

// Seizes and interrupts the threads not traced yet; returns how many, or -1 when ptrace is
// refused.
static int interrupt_new_threads(void) {
  int32_t tids[HL_MAX_TRACED];
  int n = hl_tasks_list(hl_trace.tgid, tids, HL_MAX_TRACED);
  if (n < 0) return -1;
  int fresh = 0;
  for (int k = 0; k < n; k++) {
    int32_t tid = tids[k];
    int known = tid == hl_trace.self;
    for (uint32_t i = 0; i < hl_trace.count && !known; i++) known = hl_trace.tids[i] == tid;
    if (known || hl_trace.count == HL_MAX_TRACED) continue;
    long r = hl_raw(SYS_ptrace, PTRACE_SEIZE, tid, 0, 0);
    // A thread that has exited (a main thread that called pthread_exit stays a zombie while
    // the others run) cannot be attached to, and needs no stopping.
    if (r == -ESRCH || (r < 0 && hl_task_state_dead(hl_task_state(hl_trace.tgid, tid)))) {
      struct hl_thread_state *t = hl_trace.slot_for(tid);
      if (t) t->stopped = HL_THREAD_GONE;
      continue;
    }
    if (r < 0) return -1;
    hl_raw(SYS_ptrace, PTRACE_INTERRUPT, tid, 0, 0);
    hl_trace.tids[hl_trace.count] = tid;
    hl_trace.signals[hl_trace.count] = 0;
    hl_trace.seen[hl_trace.count++] = HL_SEEN_NONE;
    hl_trace.pending++;
    fresh++;
  }
  return fresh;
}

// What wait4 said about a tracee. Registers go to its slot only while `to_slot`: once the scan
// has begun, a late stop must not change what the scanner reads.
static void note(int32_t tid, int status, int to_slot) {
  uint32_t i = 0;
  while (i < hl_trace.count && hl_trace.tids[i] != tid) i++;
  if (i == hl_trace.count || hl_trace.seen[i] != HL_SEEN_NONE) return;
  struct hl_thread_state *t = to_slot ? hl_trace.slot_for(tid) : NULL;
  if (WIFSTOPPED(status)) {
    // The interrupt's own stop, or a signal's that came first: then the signal is given back
    // when the thread is let go.
    int event = status >> 16, sig = WSTOPSIG(status);
    hl_trace.signals[i] = event == 0 && sig != SIGTRAP && sig != SIGSTOP ? sig : 0;
    hl_trace.seen[i] = HL_SEEN_STOP;
    if (t) {
      read_registers(tid, t);
      t->stopped = HL_THREAD_STOPPED;
    }
  } else if (WIFEXITED(status) || WIFSIGNALED(status)) {
    hl_trace.seen[i] = HL_SEEN_EXIT;
    if (t) t->stopped = HL_THREAD_GONE;
  } else {
    return;
  }
  hl_trace.pending--;
}

static void take_stops(int to_slot) {
  int status = 0;
  long tid;
  while ((tid = hl_raw(SYS_wait4, -1, &status, __WALL | WNOHANG, 0)) > 0)
    note((int32_t)tid, status, to_slot);
}

// Takes the interrupted threads' stops until none is pending or `deadline` passes. SIGCHLD,
// blocked here, says when a tracee has stopped; the wait for it is short, in case the kernel
// coalesced two notices into one.
static void collect_stops(uint64_t deadline) {
  uint64_t chld = 1ull << (SIGCHLD - 1);
  for (;;) {
    take_stops(1);
    uint64_t now = hl_raw_monotonic_ns();
    if (!hl_trace.pending || now >= deadline || !parent_alive()) return;
    struct timespec pause = hl_span(deadline - now < 10 * HL_MS ? deadline - now : 10 * HL_MS);
    hl_raw6(SYS_rt_sigtimedwait, (long)&chld, 0, (long)&pause, 8, 0, 0);
  }
}

// Threads still running are left attached: the kernel lets them go when the helper exits, and
// a thread with a stop pending then never takes it.
static void release_all(void) {
  take_stops(0);  // late stops: a signal one of them stopped with must be given back
  for (uint32_t i = 0; i < hl_trace.count; i++)
    if (hl_trace.seen[i] == HL_SEEN_STOP)
      hl_raw(SYS_ptrace, PTRACE_DETACH, hl_trace.tids[i], 0, hl_trace.signals[i]);
  hl_trace.count = 0;
}

// The helper's own copy of the handlers, not the program's: SIGCHLD at its default, since the
// program's SIG_IGN or SA_NOCLDSTOP would keep the tracees' stops from being signalled to it.
static int helper_setup(void) {
  struct { void *handler; unsigned long flags; void *restorer; uint64_t mask; } dfl = {0};
  hl_raw(SYS_rt_sigaction, SIGCHLD, &dfl, 0, 8);
  hl_raw(SYS_prctl, PR_SET_PDEATHSIG, SIGKILL, 0, 0);
  hl_raw(SYS_prctl, PR_SET_NAME, "heapline-scan", 0, 0);
  return parent_alive();  // the scanning thread may have died before PDEATHSIG was set
}

static int tracer_main(void *arg) {
  (void)arg;
  uint64_t start = hl_raw_monotonic_ns();
  if (!helper_setup() || wait_while(HL_IDLE, start + HL_ATTACH_NS, 1) != HL_GO) return 1;
  uint64_t end = start + HL_ATTACH_NS;
  for (;;) {  // until a look at the thread list finds none it has not interrupted
    int fresh = interrupt_new_threads();
    if (fresh < 0) {
      release_all();
      set_phase(HL_FAILED);
      return 1;
    }
    if (!fresh) break;
    uint64_t round = hl_raw_monotonic_ns() + HL_STOP_NS;
    collect_stops(round < end ? round : end);
    if (hl_raw_monotonic_ns() >= end || !parent_alive()) break;
  }
  for (uint32_t i = 0; i < hl_trace.count; i++) {
    struct hl_thread_state *t = hl_trace.seen[i] ? NULL : hl_trace.slot_for(hl_trace.tids[i]);
    if (t) t->stopped = HL_THREAD_UNRESPONSIVE;
  }
  set_phase(HL_STOPPED);
  uint64_t held = hl_raw_monotonic_ns();
  hl_trace.held_too_long = wait_while(HL_STOPPED, held + HL_HOLD_NS, 1) == HL_STOPPED;
  release_all();
  set_phase(HL_DONE);
  return 0;
}

// Reaps the helper; kills it when it has not exited by `deadline`. Returns 0 when it could not
// be reaped, so that its stack is never reused under it.
static int reap(pid_t pid, uint64_t deadline) {
  for (int killed = 0;;) {
    int status;
    long r = hl_raw(SYS_wait4, pid, &status, __WALL | WNOHANG, 0);
    if (r == pid || (r < 0 && r != -EINTR)) return 1;  // reaped, or reaped by the program
    uint64_t now = hl_raw_monotonic_ns();
    if (now >= deadline) {
      if (killed) return 0;
      hl_raw(SYS_kill, pid, SIGKILL, 0, 0);
      killed = 1;
      deadline = now + 1000 * HL_MS;
    }
    struct timespec pause = hl_span(50 * 1000);
    hl_raw(SYS_nanosleep, &pause, 0, 0, 0);
  }
}

static void forget_helper(pid_t pid) {
  if (!reap(pid, hl_raw_monotonic_ns() + 1000 * HL_MS)) hl_tracer_stack = NULL;
  hl_raw(SYS_prctl, PR_SET_PTRACER, 0, 0, 0);
}

// 0 with the world stopped; EPERM when ptrace is refused; clone's error when the helper could
// not start; ETIMEDOUT when it did not answer in time (then nothing is stopped).
int hl_ptrace_stop(int32_t self, struct hl_thread_state *(*slot_for)(int32_t tid)) {
  if (!hl_tracer_stack && !(hl_tracer_stack = hl_map(HL_TRACER_STACK))) return ENOMEM;
  memset(&hl_trace, 0, sizeof hl_trace);
  hl_trace.tgid = getpid();
  hl_trace.self = self;
  hl_trace.slot_for = slot_for;
  // The helper inherits this thread's signal mask: with every signal blocked from its birth, no
  // handler of the program ever runs in it.
  int saved = errno;
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &old);
  // No exit signal: the helper is no child that the program's SIGCHLD handler or wait() sees.
  pid_t pid = clone(tracer_main, hl_tracer_stack + HL_TRACER_STACK,
                    CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, NULL);
  int err = pid < 0 ? errno : 0;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  errno = saved;
  if (pid < 0) return err;
  hl_raw(SYS_prctl, PR_SET_PTRACER, pid, 0, 0);  // under Yama's ptrace_scope 1
  set_phase(HL_GO);
  int phase = wait_while(HL_GO, hl_raw_monotonic_ns() + HL_HELPER_NS, 0);
  if (phase == HL_STOPPED) {
    hl_tracer = pid;
    return 0;
  }
  if (phase == HL_GO) hl_raw(SYS_kill, pid, SIGKILL, 0, 0);  // its exit lets every thread go
  forget_helper(pid);
  return phase == HL_FAILED ? EPERM : ETIMEDOUT;
}

void hl_ptrace_resume(void) {
  if (hl_trace.held_too_long)  // the helper says nothing itself: it may not touch errno
    hl_log("the leak scan held the program's threads for 60 s: they ran again before it ended, "
           "and it may have missed what they changed", NULL);
  set_phase(HL_RESUME);
  wait_while(HL_RESUME, hl_raw_monotonic_ns() + HL_HELPER_NS, 0);
  forget_helper(hl_tracer);
  hl_tracer = 0;
}
