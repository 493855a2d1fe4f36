// Stopping the world for the leak scan: with ptrace (stopptrace.c) when the system allows it,
// else with signals, as follows. Every other thread of the process gets a signal; its
// handler saves the thread's registers, stack pointer and thread pointer in the thread's slot,
// then waits on a futex until the scan resumes the world. Threads are found in /proc/self/task,
// read again until no new one appears, so a thread created meanwhile is stopped too. A thread
// that does not answer (it blocks the signal) is noted; its whole stack is scanned instead.
//
// The signal is SIGPROF unless HEAPLINE_STOP_SIGNAL names another (which also makes the scan use
// signals rather than ptrace): libdispatch's worker
// threads block every signal but the synchronous ones, SIGPIPE and SIGPROF (left for
// profilers). It is sent with rt_tgsigqueueinfo and a cookie, so that the handler knows its own
// from a profiler's, which it passes on to the handler the program had. The handler stays
// installed once set (and is set again if the program replaced it): a thread that had the
// signal blocked may take it after the scan, and must then find a handler that returns. From
// then on `sigaction` on that signal reads and sets the program's handler, which the shim's
// takes the flags and mask of: before, the program saw the shim's handler, and its own lost its
// flags (SA_RESTART set where it had none: a read that its SIGPROF interrupted restarted rather
// than fail with EINTR).
//
// Every wait has a deadline (issue 8): a thread has 500 ms to answer, the whole stop 2 s, and a
// parked thread goes back to work after 60 s even if the scan has not let it go. Sleeps are raw
// system calls, no cancellation points: a scanner cancelled with the world stopped would leave
// it stopped for good.
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include "leakscan.h"
#include "tasks.h"

enum { HL_STOP_CAPACITY = 8192, HL_ANSWER_NS = 500 * 1000 * 1000, HL_BLOCKED_NS = 2 * 1000 * 1000 };
#define HL_WORLD_NS ((uint64_t)2000 * 1000 * 1000)
#define HL_PARK_NS ((uint64_t)60 * 1000 * 1000 * 1000)
#define HL_STOP_COOKIE ((void *)(uintptr_t)0x48454150u)  // "HEAP"

static _Atomic uint32_t hl_generation;  // odd while the world is being stopped or is stopped
static struct hl_thread_state *hl_slots;  // never unmapped: a late handler may still look
static uint32_t hl_used[HL_STOP_CAPACITY], hl_used_count;  // slots in use, to clear and visit
static struct sigaction hl_previous;  // the program's handler, once the shim's is installed
static _Atomic int hl_installed;
static int (*hl_real_sigaction)(int, const struct sigaction *, struct sigaction *);

int hl_stopworld_signal(void) {
  static int sig;
  if (!sig) {
    const char *env = hl_option("HEAPLINE_STOP_SIGNAL");
    int v = env ? atoi(env) : 0;
    sig = v > 0 && v < NSIG ? v : SIGPROF;
  }
  return sig;
}

static uint64_t now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct hl_thread_state *slot_of(int32_t tid, int insert) {
  uint32_t mask = HL_STOP_CAPACITY - 1, i = ((uint32_t)tid * 2654435761u) & mask;
  for (uint32_t probes = 0; probes < HL_STOP_CAPACITY; probes++, i = (i + 1) & mask) {
    if (hl_slots[i].tid == tid) return &hl_slots[i];
    if (!hl_slots[i].tid) {
      if (!insert) return NULL;
      hl_slots[i].tid = tid;
      hl_used[hl_used_count++] = i;
      return &hl_slots[i];
    }
  }
  return NULL;
}

static void on_stop(int sig, siginfo_t *info, void *context) {
  int saved = errno;
  uint32_t gen = atomic_load(&hl_generation);
  int ours = info->si_code == SI_QUEUE && info->si_pid == getpid() &&
             info->si_value.sival_ptr == HL_STOP_COOKIE;
  struct hl_thread_state *slot =
      ours && (gen & 1) && hl_slots ? slot_of((int32_t)syscall(SYS_gettid), 0) : NULL;
  if (!slot) {  // late, or not sent by the scan: the program's own handler, if it had one
    struct sigaction program = hl_previous;
    if (!ours && (program.sa_flags & SA_RESETHAND)) hl_previous.sa_handler = SIG_DFL;
    if (!ours && (program.sa_flags & SA_SIGINFO) && program.sa_sigaction)
      program.sa_sigaction(sig, info, context);
    else if (!ours && program.sa_handler != SIG_DFL && program.sa_handler != SIG_IGN)
      program.sa_handler(sig);
    errno = saved;
    return;
  }
  sigset_t all;  // nothing else runs on a parked thread (the program's mask comes back on return)
  sigfillset(&all);
  hl_raw(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
  const ucontext_t *uc = context;
  for (int i = 0; i < NGREG && i < HL_REGS; i++) slot->regs[i] = (uint64_t)uc->uc_mcontext.gregs[i];
  if (uc->uc_mcontext.fpregs)  // pointers copied through SSE registers live there meanwhile
    memcpy(&slot->regs[NGREG], uc->uc_mcontext.fpregs->_xmm, 16 * 16);
  slot->sp = (uint64_t)uc->uc_mcontext.gregs[REG_RSP];
  uint64_t tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
  slot->tp = tp;
  atomic_store_explicit(&slot->acked, gen, memory_order_release);
  uint64_t parked = now_ns();
  while (atomic_load(&hl_generation) == gen && now_ns() - parked < HL_PARK_NS) {
    struct timespec pause = {1, 0};
    hl_raw6(SYS_futex, (long)&hl_generation, FUTEX_WAIT_PRIVATE, gen, (long)&pause, 0, 0);
  }
  errno = saved;
}

static int has_handler(const struct sigaction *a) {
  if (a->sa_flags & SA_SIGINFO) return a->sa_sigaction != NULL;
  return a->sa_handler != SIG_DFL && a->sa_handler != SIG_IGN;
}

// The shim's handler, with the flags and mask of the program's `program` when it has one, so
// that its signals interrupt, restart and block as they would untraced.
static void install_over(const struct sigaction *program) {
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_sigaction = on_stop;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&action.sa_mask);
  if (has_handler(program)) {
    action.sa_flags = SA_SIGINFO | (program->sa_flags & (SA_RESTART | SA_ONSTACK | SA_NODEFER));
    action.sa_mask = program->sa_mask;
  }
  hl_real_sigaction(hl_stopworld_signal(), &action, NULL);
}

void hl_stopworld_install(void) {
  if (!hl_slots) hl_slots = hl_map(HL_STOP_CAPACITY * sizeof *hl_slots);
  if (!hl_real_sigaction) hl_real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  struct sigaction action;
  if (!hl_real_sigaction || hl_real_sigaction(hl_stopworld_signal(), NULL, &action) != 0) return;
  if ((action.sa_flags & SA_SIGINFO) && action.sa_sigaction == on_stop) return;
  hl_previous = action;  // the program's, set while the shim's was not there
  install_over(&hl_previous);
  atomic_store(&hl_installed, 1);
}

// Whether the program handles the stop signal (a handler of its own, not the default or
// ignored): the shim's thread takes the signal only then (sampler.c).
int hl_stop_signal_handled(void) {
  if (atomic_load(&hl_installed)) return has_handler(&hl_previous);
  struct {
    void *handler;
    unsigned long flags;
    void *restorer;
    uint64_t mask;
  } now;
  return hl_raw(SYS_rt_sigaction, hl_stopworld_signal(), NULL, &now, 8) == 0 &&
         now.handler != SIG_DFL && now.handler != SIG_IGN;
}

int sigaction(int sig, const struct sigaction *act, struct sigaction *old) {
  if (!hl_real_sigaction) hl_real_sigaction = dlsym(RTLD_NEXT, "sigaction");
  if (sig != hl_stopworld_signal()) return hl_real_sigaction(sig, act, old);
  if (!atomic_load(&hl_installed)) {
    int result = hl_real_sigaction(sig, act, old);
    if (act) hl_stop_signal_changed();  // the shim's thread follows it (sampler.c)
    return result;
  }
  struct sigaction was = hl_previous;
  if (act) {
    hl_previous = *act;
    install_over(act);
    hl_stop_signal_changed();
  }
  if (old) *old = was;
  return 0;
}

// Signals the threads not seen before; returns how many were new.
static int signal_new_threads(int32_t self) {
  static int32_t tids[HL_STOP_CAPACITY];  // only the scanner, holding the scan lock, uses it
  int n = hl_tasks_list(getpid(), tids, HL_STOP_CAPACITY);
  if (n < 0) return -1;
  int fresh = 0;
  for (int k = 0; k < n; k++) {
    int32_t tid = tids[k];
    // The shim's own thread blocks the signal (sampler.c): it runs none of the program's code
    // and holds no pointer of its, and its stack is never a root (roots.c).
    if (tid == self || tid == atomic_load(&hl_sampler_tid) || slot_of(tid, 0)) continue;
    struct hl_thread_state *slot = slot_of(tid, 1);
    if (!slot) continue;  // more than 8,192 threads: the rest run on, unscanned
    fresh++;
    siginfo_t info;
    memset(&info, 0, sizeof info);
    info.si_signo = hl_stopworld_signal();
    info.si_code = SI_QUEUE;
    info.si_pid = getpid();
    info.si_uid = getuid();
    info.si_value.sival_ptr = HL_STOP_COOKIE;
    if (syscall(SYS_rt_tgsigqueueinfo, getpid(), tid, info.si_signo, &info) != 0)
      slot->stopped = HL_THREAD_GONE;
  }
  return fresh;
}

// Whether the thread blocks the stop signal, from the SigBlk line of its /proc status.
static int blocks_signal(int32_t tid) {
  char text[2048];
  if (hl_task_read(getpid(), tid, "status", text, sizeof text) <= 0) return 0;
  const char *line = strstr(text, "SigBlk:");
  if (!line) return 0;
  uint64_t mask = 0;
  for (line += 7; *line == ' ' || *line == '\t'; line++) {}
  for (; (*line >= '0' && *line <= '9') || (*line >= 'a' && *line <= 'f'); line++)
    mask = mask << 4 | (uint64_t)(*line <= '9' ? *line - '0' : *line - 'a' + 10);
  return (mask >> (hl_stopworld_signal() - 1)) & 1;
}

// Waits until every signalled thread has answered, has gone, or has had its time. A thread that
// has not answered after 2 ms and blocks the signal is not waited for any longer, nor one that
// has exited: a main thread that called pthread_exit is a zombie until the process ends, and
// takes signals without ever running a handler.
static void wait_for_answers(uint32_t gen) {
  uint64_t start = now_ns();
  int checked = 0;
  for (unsigned round = 0;; round++) {
    int waiting = 0;
    uint64_t now = now_ns();
    int check = !checked && now - start > HL_BLOCKED_NS;
    for (uint32_t u = 0; u < hl_used_count; u++) {
      struct hl_thread_state *t = &hl_slots[hl_used[u]];
      if (t->stopped) continue;
      if (atomic_load_explicit(&t->acked, memory_order_acquire) == gen) t->stopped = HL_THREAD_STOPPED;
      else if (round % 64 == 63 && syscall(SYS_tgkill, getpid(), t->tid, 0) != 0)
        t->stopped = HL_THREAD_GONE;
      else if (check && hl_task_state_dead(hl_task_state(getpid(), t->tid)))
        t->stopped = HL_THREAD_GONE;
      else if (check && blocks_signal(t->tid)) t->stopped = HL_THREAD_UNRESPONSIVE;
      else waiting++;
    }
    checked |= check;
    if (!waiting) return;
    // Past the deadline, a thread that is runnable has only not been given a core yet (a loaded
    // machine): it keeps waiting until the whole stop's deadline. One that sleeps in the kernel
    // without answering will not answer.
    if (now - start > HL_ANSWER_NS && round % 64 == 0) {
      int runnable = 0;
      for (uint32_t u = 0; u < hl_used_count; u++) {
        struct hl_thread_state *t = &hl_slots[hl_used[u]];
        if (t->stopped) continue;
        if (now - start < HL_WORLD_NS && hl_task_state(getpid(), t->tid) == 'R') runnable++;
        else t->stopped = HL_THREAD_UNRESPONSIVE;
      }
      if (!runnable) return;
    }
    if (round < 16) sched_yield();  // the others need the CPU to run their handlers
    else {
      struct timespec pause = {0, 20 * 1000};
      hl_raw(SYS_nanosleep, &pause, 0, 0, 0);
    }
  }
}

static struct hl_thread_state *new_slot(int32_t tid) { return slot_of(tid, 1); }

static void tally(struct hl_world *w) {
  for (uint32_t u = 0; u < hl_used_count; u++) {
    if (hl_slots[hl_used[u]].stopped == HL_THREAD_STOPPED) w->stopped++;
    else if (hl_slots[hl_used[u]].stopped == HL_THREAD_UNRESPONSIVE) w->unresponsive++;
    w->count++;
  }
  w->used = hl_used;
  w->used_count = hl_used_count;
}

// ptrace first (stopptrace.c); signals when it is refused or its helper cannot start, or when
// HEAPLINE_STOP_SIGNAL asks.
int hl_world_stop(struct hl_world *w, int32_t self, uintptr_t self_sp) {
  static int ptrace_refused = -1;
  if (ptrace_refused < 0) ptrace_refused = hl_option("HEAPLINE_STOP_SIGNAL") != NULL;
  if (!hl_slots) hl_slots = hl_map(HL_STOP_CAPACITY * sizeof *hl_slots);
  if (!hl_slots) return ENOMEM;
  for (uint32_t u = 0; u < hl_used_count; u++)  // the last scan's threads
    memset(&hl_slots[hl_used[u]], 0, sizeof *hl_slots);
  hl_used_count = 0;
  memset(w, 0, sizeof *w);
  w->threads = hl_slots;
  w->self_sp = self_sp;
  w->capacity = HL_STOP_CAPACITY;
  if (!ptrace_refused) {
    int err = hl_ptrace_stop(self, new_slot);
    if (!err) {
      w->ptraced = 1;
      tally(w);
      return 0;
    }
    if (err == ETIMEDOUT) return err;  // the helper did not answer: nothing is stopped
    // Refused (EPERM), or no helper could start (EAGAIN under RLIMIT_NPROC, a sandbox's
    // ENOSYS or ENOMEM for clone): not again, as the next scan would meet the same.
    ptrace_refused = 1;
    for (uint32_t u = 0; u < hl_used_count; u++)
      memset(&hl_slots[hl_used[u]], 0, sizeof *hl_slots);
    hl_used_count = 0;
  }
  hl_stopworld_install();
  uint32_t gen = atomic_fetch_add(&hl_generation, 1) + 1;  // odd: handlers park from now on
  uint64_t start = now_ns();
  // Until a look at /proc/self/task finds no thread it has not signalled; threads that appear
  // after the deadline run on, unscanned.
  while (now_ns() - start < HL_WORLD_NS) {
    int fresh = signal_new_threads(self);
    if (fresh < 0) {
      hl_world_resume(w);
      return EIO;
    }
    if (!fresh) break;
    wait_for_answers(gen);
  }
  tally(w);
  return 0;
}

void hl_world_resume(struct hl_world *w) {
  if (w->ptraced) {
    hl_ptrace_resume();
    return;
  }
  atomic_fetch_add(&hl_generation, 1);  // even: parked handlers return
  syscall(SYS_futex, &hl_generation, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}
