// Memory warnings and the observers that answer them.
//
// A warning is raised by the API (heapline_pressure_simulate), by the sampler (a --warn-at time,
// a --memory-limit threshold: budget.c), by a signal sent to the process, or by the kernel's
// pressure stall information (PSI). Raising writes a MARK of kind 2 and a WARNING record, then
// hands the warning to the observers. A simulated warning runs them on the caller's thread, so
// the caller learns what they freed; any other runs them on the pressure thread below, which is
// an ordinary (traced) thread: the frees that observers make must be recorded, and the
// sampler's thread records nothing.
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "heapline.h"
#include "internal.h"

void hl_finish_pending_for_flush(struct hl_buffer *b);

enum { HL_OBSERVERS = 64, HL_OBSERVER_NAME = 64, HL_QUEUE = 64 };

struct hl_observer {
  heapline_pressure_observer fn;
  void *context;
  int active;
  char name[HL_OBSERVER_NAME];
};

// Held for a whole round of observers, so that removing one waits for the round to end.
// Recursive: an observer may remove itself, or another, from inside its call.
static pthread_mutex_t hl_observers_mutex = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static struct hl_observer hl_observers[HL_OBSERVERS];
static _Atomic uint32_t hl_warning_serial;

// Warnings waiting for the pressure thread. Producers are the sampler and a signal handler, so
// a slot is claimed with fetch_add and published by its time word, as marks.c does.
static _Atomic uint64_t hl_queue_time[HL_QUEUE];  // time | 1; 0 while not yet written
static _Atomic uint64_t hl_queue_what[HL_QUEUE];  // serial << 16 | source << 8 | level
static _Atomic uint32_t hl_queue_head;
static uint32_t hl_queue_tail;  // the pressure thread's
static int hl_wake_fd = -1;     // an eventfd: write(2) is async-signal-safe
static _Atomic int hl_psi_fd = -1;
static _Atomic int hl_thread_started;
static int hl_warn_signal;

static const char *const hl_level_names[] = {"normal", "warning", "urgent", "critical"};

static int clamp_level(int level) {
  return level < HEAPLINE_PRESSURE_NORMAL    ? HEAPLINE_PRESSURE_NORMAL
         : level > HEAPLINE_PRESSURE_CRITICAL ? HEAPLINE_PRESSURE_CRITICAL
                                              : level;
}

int heapline_pressure_add_observer(const char *name, heapline_pressure_observer fn,
                                   void *context) {
  if (!fn) return -1;
  int token = -1;
  pthread_mutex_lock(&hl_observers_mutex);
  for (int i = 0; i < HL_OBSERVERS && token < 0; i++) {
    struct hl_observer *o = &hl_observers[i];
    if (o->active) continue;
    o->fn = fn;
    o->context = context;
    strncpy(o->name, name && *name ? name : "observer", HL_OBSERVER_NAME - 1);
    o->name[HL_OBSERVER_NAME - 1] = 0;
    o->active = 1;
    token = i + 1;
  }
  pthread_mutex_unlock(&hl_observers_mutex);
  return token;
}

void heapline_pressure_remove_observer(int token) {
  if (token < 1 || token > HL_OBSERVERS) return;
  pthread_mutex_lock(&hl_observers_mutex);
  hl_observers[token - 1].active = 0;
  pthread_mutex_unlock(&hl_observers_mutex);
}

// The buffer to write into: `given`, else the calling thread's while recording (NULL when not).
// The guard keeps the shim's own work out of the trace until end_write.
static struct hl_buffer *begin_write(struct hl_buffer *given, int *owned) {
  hl_tls.guard++;
  *owned = 0;
  if (given || atomic_load(&hl_state) != HL_ON) return given;
  struct hl_buffer *b = hl_acquire();
  if (b) {
    *owned = 1;
    hl_finish_pending_for_flush(b);
  }
  return b;
}

static void end_write(struct hl_buffer *b, int owned) {
  if (owned) hl_release(b);
  hl_tls.guard--;
}

// Hands a warning to the pressure thread. Async-signal-safe: atomics and write(2) only.
static void enqueue(uint32_t serial, int source, int level, uint64_t time) {
  if (hl_wake_fd < 0) return;
  uint32_t slot = atomic_fetch_add(&hl_queue_head, 1) % HL_QUEUE;
  uint64_t what = (uint64_t)serial << 16 | (uint64_t)source << 8 | (uint64_t)level;
  atomic_store(&hl_queue_what[slot], what);
  atomic_store(&hl_queue_time[slot], time | 1);
  uint64_t one = 1;
  ssize_t ignored = write(hl_wake_fd, &one, sizeof one);
  (void)ignored;
}

uint32_t hl_pressure_raise(struct hl_buffer *given, int level, int source, uint64_t time,
                           uint64_t footprint, uint64_t limit, int deliver) {
  level = clamp_level(level);
  uint32_t serial = atomic_fetch_add(&hl_warning_serial, 1) + 1;
  const char *name = hl_level_names[level];
  int owned;
  struct hl_buffer *b = begin_write(given, &owned);
  if (b) {
    hl_emit_mark(b, time, HL_MARK_WARNING, name, strlen(name));
    hl_ensure(b, 1 + 10 + 10 + 2 + 2 * 10);
    hl_put_u8(b, HL_TAG_WARNING);
    hl_put_time(b, time);
    hl_put_varint(b, serial);
    hl_put_u8(b, (uint8_t)level);
    hl_put_u8(b, (uint8_t)source);
    hl_put_varint(b, footprint);
    hl_put_varint(b, limit);
    hl_commit_record(b);
  }
  end_write(b, owned);
  if (deliver) enqueue(serial, source, level, time);
  return serial;
}

static void emit_response(uint32_t serial, uint64_t freed, const char *name) {
  int owned;
  struct hl_buffer *b = begin_write(NULL, &owned);
  if (b) {
    size_t len = strlen(name);
    hl_ensure(b, (uint32_t)(1 + 4 * 10 + len));
    hl_put_u8(b, HL_TAG_WARNING_RESPONSE);
    hl_put_time(b, hl_now());
    hl_put_varint(b, serial);
    hl_put_varint(b, freed);
    hl_put_varint(b, len);
    hl_put_bytes(b, name, (uint32_t)len);
    hl_commit_record(b);
  }
  end_write(b, owned);
}

// One round: every observer, in the order they registered, each answer recorded.
static uint64_t dispatch(uint32_t serial, int level) {
  uint64_t total = 0;
  pthread_mutex_lock(&hl_observers_mutex);
  for (int i = 0; i < HL_OBSERVERS; i++) {
    struct hl_observer *o = &hl_observers[i];
    if (!o->active) continue;
    uint64_t freed = o->fn(level, o->context);
    total += freed;
    emit_response(serial, freed, o->name);
  }
  pthread_mutex_unlock(&hl_observers_mutex);
  return total;
}

// Waits (up to a second) for a round of observers in progress to end, so that the answers
// they are about to record reach the trace before it closes.
void hl_pressure_quiesce(void) {
  struct timespec deadline;
  clock_gettime(CLOCK_REALTIME, &deadline);
  deadline.tv_sec += 1;
  if (pthread_mutex_timedlock(&hl_observers_mutex, &deadline) == 0)
    pthread_mutex_unlock(&hl_observers_mutex);
}

uint64_t heapline_pressure_simulate(int level) {
  level = clamp_level(level);
  uint32_t serial = hl_pressure_raise(NULL, level, HL_SOURCE_API, hl_now(), hl_read_rss(), 0, 0);
  return dispatch(serial, level);
}

// A signal handler may not write records: it queues the warning, which the pressure thread
// raises. sigqueue(2) may carry the level (1 to 3) as its value; kill(2) means a warning.
static void on_warn_signal(int sig, siginfo_t *info, void *ucontext) {
  (void)sig;
  (void)ucontext;
  int saved = errno;
  int level = HEAPLINE_PRESSURE_WARNING;
  if (info && info->si_code == SI_QUEUE && info->si_value.sival_int >= HEAPLINE_PRESSURE_WARNING &&
      info->si_value.sival_int <= HEAPLINE_PRESSURE_CRITICAL)
    level = info->si_value.sival_int;
  enqueue(0, HL_SOURCE_SIGNAL, level, hl_now());  // serial 0: the pressure thread raises it
  errno = saved;
}

static void drain_queue(void) {
  while (hl_queue_tail != atomic_load(&hl_queue_head)) {
    uint32_t slot = hl_queue_tail % HL_QUEUE;
    uint64_t time = atomic_exchange(&hl_queue_time[slot], 0);
    if (!time) break;  // claimed but not written yet: the writer's wake-up comes next
    uint64_t what = atomic_load(&hl_queue_what[slot]);
    hl_queue_tail++;
    int level = (int)(what & 0xFF), source = (int)((what >> 8) & 0xFF);
    uint32_t serial = (uint32_t)(what >> 16);
    if (!serial) serial = hl_pressure_raise(NULL, level, source, time & ~1ull, hl_read_rss(), 0, 0);
    dispatch(serial, level);
  }
}

_Atomic int32_t hl_pressure_tid;  // sampler.c ends the process when only the shim's are left

static void *pressure_main(void *arg) {
  (void)arg;
  atomic_store(&hl_pressure_tid, (int32_t)syscall(SYS_gettid));
  for (;;) {
    int psi = atomic_load(&hl_psi_fd);
    struct pollfd fds[2] = {{.fd = hl_wake_fd, .events = POLLIN}, {.fd = psi, .events = POLLPRI}};
    if (poll(fds, psi >= 0 ? 2 : 1, -1) < 0) continue;
    if (fds[0].revents & POLLIN) {
      uint64_t count;
      ssize_t ignored = read(hl_wake_fd, &count, sizeof count);
      (void)ignored;
    }
    // A monitor stopped or replaced meanwhile was closed by whoever did it: leave it alone.
    int current = psi;
    int still = psi >= 0 && atomic_compare_exchange_strong(&hl_psi_fd, &current, psi);
    if (still && (fds[1].revents & (POLLERR | POLLNVAL))) {  // the monitor went away
      if (atomic_compare_exchange_strong(&hl_psi_fd, &current, -1)) close(psi);
    } else if (still && (fds[1].revents & POLLPRI)) {
      uint32_t serial = hl_pressure_raise(NULL, HEAPLINE_PRESSURE_WARNING, HL_SOURCE_PSI,
                                          hl_now(), hl_read_rss(), 0, 0);
      dispatch(serial, HEAPLINE_PRESSURE_WARNING);
    }
    drain_queue();
  }
  return NULL;
}

// Starts the pressure thread once, with every signal blocked: the program's signals are not
// its business.
static int start_thread(void) {
  if (atomic_exchange(&hl_thread_started, 1)) return 0;
  hl_tls.guard++;
  hl_wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (hl_wake_fd >= 0) hl_wake_fd = hl_fd_park(hl_wake_fd);
  int err = hl_wake_fd < 0 ? errno : 0;
  if (!err) {
    sigset_t old;
    hl_block_signals(0, &old);  // it runs the program's observers: a leak scan stops it
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    err = pthread_create(&thread, &attr, pressure_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
  }
  if (err) {
    if (hl_wake_fd >= 0) close(hl_wake_fd);
    hl_wake_fd = -1;
    atomic_store(&hl_thread_started, 0);
  }
  hl_tls.guard--;
  return err;
}

int heapline_pressure_monitor_psi(const char *trigger) {
  const char *spec = trigger && *trigger ? trigger : "some 150000 1000000";
  int fd = open("/proc/pressure/memory", O_RDWR | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) return errno == EACCES || errno == ENOENT ? ENOENT : errno;
  // The kernel takes the trigger with its terminating NUL.
  if (write(fd, spec, strlen(spec) + 1) < 0) {
    int err = errno;
    close(fd);
    return err;
  }
  int err = start_thread();
  if (err) {
    close(fd);
    return err;
  }
  int old = atomic_exchange(&hl_psi_fd, hl_fd_park(fd));
  if (old >= 0) close(old);
  uint64_t one = 1;
  ssize_t ignored = write(hl_wake_fd, &one, sizeof one);  // poll the new descriptor from now on
  (void)ignored;
  return 0;
}

void heapline_pressure_stop_psi(void) {
  int old = atomic_exchange(&hl_psi_fd, -1);
  if (old < 0) return;
  // The pressure thread may be polling it: wake it so it polls without, then close.
  uint64_t one = 1;
  ssize_t ignored = write(hl_wake_fd, &one, sizeof one);
  (void)ignored;
  close(old);
}

void hl_pressure_install(void) {
  const char *sig = hl_option("HEAPLINE_WARN_SIGNAL");
  hl_warn_signal = sig ? atoi(sig) : 0;  // none unless asked: the program's signals are its own
  // The thread, and its eventfd, only when a source of warnings was asked for: a descriptor the
  // program could have is taken only for a reason.
  int wanted = (hl_warn_signal > 0 && hl_warn_signal < NSIG) || hl_option("HEAPLINE_PSI") ||
               hl_option("HEAPLINE_WARN_AT_MS") || hl_option("HEAPLINE_MEMORY_LIMIT");
  if (!wanted || start_thread() != 0) {
    hl_budget_install();
    return;
  }
  if (hl_warn_signal > 0 && hl_warn_signal < NSIG) {
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_sigaction = on_warn_signal;
    action.sa_flags = SA_RESTART | SA_SIGINFO;
    sigemptyset(&action.sa_mask);
    sigaction(hl_warn_signal, &action, NULL);
  }
  const char *psi = hl_option("HEAPLINE_PSI");
  if (psi) {
    int err = heapline_pressure_monitor_psi(psi);
    if (err) hl_log("memory pressure (PSI) is not watched: ", strerror(err));
  }
  hl_budget_install();
}

// The child of fork() has none of the parent's threads; it starts its own when it needs one.
void hl_pressure_after_fork_child(void) {
  if (hl_wake_fd >= 0) close(hl_wake_fd);
  hl_wake_fd = -1;
  int psi = atomic_exchange(&hl_psi_fd, -1);
  if (psi >= 0) close(psi);
  atomic_store(&hl_thread_started, 0);
  hl_queue_tail = atomic_load(&hl_queue_head);
}
