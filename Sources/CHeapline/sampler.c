// The shim's own thread. Every tick it samples RSS; every half second it names new Swift types,
// writes the module map if objects were loaded, and flushes idle threads' buffers, so that a
// process killed with SIGKILL leaves a trace readable up to half a second before its death.
// Between ticks it sleeps until the next leak scan or trace rotation is due, or until a signal
// handler wakes it (a scan asked for by signal). It used to wake every 10 ms to look for those:
// a tenth of a second of CPU every ten seconds of the program's run, most of it spent by the
// kernel switching to it and opening /proc for the last-thread check.
//
// It also ends the process when the program's last thread has gone (issue 8): a process lives
// while any of its threads does, so after a main thread's pthread_exit this thread alone would
// keep it alive for ever, as heaptrack's does.
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "tasks.h"

static pthread_t hl_thread;
static _Atomic int hl_running;
static int hl_started;
static unsigned hl_tick_ms = 100;
struct hl_buffer *hl_sampler_buffer;  // the shim's own buffer, thread serial 0

// The start of one of the calling thread's /proc files (hl_task_read), opened for each read: a
// descriptor held all run would be one the program cannot have. The calling thread's view, not
// /proc/self's: that is the main thread's, which has no memory left to show once it has called
// pthread_exit (every field 0 while the other threads run on).
static long read_own(const char *leaf, char *text, size_t size) {
  return hl_task_read((int32_t)getpid(), (int32_t)hl_raw(SYS_gettid, 0, 0, 0, 0), leaf, text, size);
}

uint64_t hl_read_rss(void) {
  char text[128];
  if (read_own("statm", text, sizeof text) <= 0) return 0;
  const char *p = text;
  while (*p && *p != ' ') p++;  // skip the size field; the second is resident pages
  uint64_t pages = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
  return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

// The kernel's high-water mark of the process's RSS (VmHWM), in bytes; 0 when unreadable.
static uint64_t read_rss_peak(void) {
  char text[4096];
  if (read_own("status", text, sizeof text) <= 0) return 0;
  const char *p = strstr(text, "\nVmHWM:");
  if (!p) return 0;
  for (p += 7; *p == ' ' || *p == '\t'; p++) {
  }
  uint64_t kb = 0;
  for (; *p >= '0' && *p <= '9'; p++) kb = kb * 10 + (uint64_t)(*p - '0');
  return kb * 1024;
}

// The high-water mark as the recording began or the last sample found it. Samples 100 ms apart
// miss what comes and goes between them: a program that touched 50 MB for 20 ms peaked at 3 MB
// by its samples. So each sample reads the mark too, and when it has risen, the sample carries
// it (RSS_PEAK): the RSS reached it after the previous sample. A mark from before the
// recording began is never taken for one of its own.
static uint64_t hl_rss_peak_seen;

void hl_rss_begin(struct hl_buffer *b) {
  hl_rss_peak_seen = read_rss_peak();
  hl_emit_rss(b, 0, hl_read_rss(), 0);
}

void hl_rss_sample(struct hl_buffer *b, uint64_t time, uint64_t rss) {
  uint64_t peak = read_rss_peak();
  int risen = peak > hl_rss_peak_seen && peak > rss;
  if (peak > hl_rss_peak_seen) hl_rss_peak_seen = peak;
  hl_emit_rss(b, time, rss, risen ? peak : 0);
}

// Work that must happen outside the hooks; the caller owns the sampler buffer. `modules`: the
// module map too, which asks the dynamic loader (dl_iterate_phdr takes its lock); a caller that
// holds the program's buffers must not, since a thread inside dlclose holds that lock while it
// frees, and would wait for its buffer (a rotation hung so: 1 run in 3 of a reloading program).
void hl_sampler_housekeeping(int modules) {
  struct hl_buffer *b = hl_sampler_buffer;
  if (hl_swift_present) hl_swift_name_pending(b);
  hl_categories_emit_pending(b);
  if (modules) hl_modules_emit_if_changed(b, 0);
  hl_buffer_flush(b);
}

extern _Atomic int32_t hl_pressure_tid;  // pressure.c
static sigset_t hl_program_mask;  // of the thread that started the sampler

// The main thread's status, through a descriptor opened when the shim's thread starts: once
// the main thread has called pthread_exit, the last program thread to go may leave the shim no
// way to open one (a program that lowered its descriptor limit to 3, or moved into a chroot
// without /proc), and the process never ended (nor did SIGTERM end it: the shim's thread, the
// only one left, blocks it). Held parked high, like the trace's; one that the program closed, or
// put a file of its own on (told by device and inode), is not read, and the status is opened
// anew for each read as before.
static int hl_status_fd = -1;
static struct stat hl_status_st;

static void hold_main_status(void) {
  char path[64];
  hl_task_path(path, (int32_t)getpid(), (int32_t)getpid(), "status");
  long fd = hl_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return;
  int parked = hl_fd_park((int)fd);
  if (fstat(parked, &hl_status_st) == 0) hl_status_fd = parked;
  else close(parked);
}

static int status_held(void) {
  return hl_fd_names(hl_status_fd, hl_status_st.st_dev, hl_status_st.st_ino);
}

// Closes the descriptor only while it is the shim's: on a number the program took, it is the
// program's file.
static void let_go_of_main_status(void) {
  if (status_held()) close(hl_status_fd);
  hl_status_fd = -1;
}

static long read_main_status(int32_t pid, char *text, size_t size) {
  if (status_held()) {
    long len = hl_raw6(SYS_pread64, hl_status_fd, (long)text, (long)(size - 1), 0, 0, 0);
    if (len > 0) {
      text[len] = 0;
      return len;
    }
  }
  return hl_task_read(pid, pid, "status", text, size);
}

// Whether every thread but the shim's own has exited. The main thread goes first: until it has,
// a look at its state is all it takes. Afterwards the kernel's count of the process's threads
// settles it, from the same status (the main thread counts until the process ends: it stays a
// zombie): the main thread's zombie, this thread, and the pressure thread once it has said its
// id (a pressure thread not yet started counts as the program's, so the answer waits). It used
// to list the threads and then read each one's state: a listed thread could make another and
// exit in between, and the process was ended under the new one, a live program (exit status 0,
// its output lost).
static int alone(int *unknown) {
  int32_t pid = (int32_t)getpid(), self = (int32_t)hl_raw(SYS_gettid, 0, 0, 0, 0);
  char text[4096];
  *unknown = 0;
  if (pid == self) return 0;
  if (read_main_status(pid, text, sizeof text) <= 0) {
    *unknown = 1;
    return 0;
  }
  const char *state = strstr(text, "\nState:");
  if (!state) return 0;
  for (state += 7; *state == ' ' || *state == '\t'; state++) {
  }
  if (!*state || !hl_task_state_dead(*state)) return 0;
  const char *line = strstr(text, "\nThreads:");
  int n = line ? atoi(line + 10) : 0;
  return n > 0 && n <= 2 + (atomic_load(&hl_pressure_tid) != 0);
}

// What glibc's last thread does when it exits (nptl's start_thread, and __libc_start_call_main
// after the main thread's pthread_exit): exit(0), which runs atexit handlers and destructors,
// and so the preload library's, which finishes the trace. They run as on a program thread:
// recorded, with the program's signal mask.
static void exit_as_the_last_thread(void) {
  atomic_store(&hl_running, 0);
  hl_tls.internal = 0;
  pthread_sigmask(SIG_SETMASK, &hl_program_mask, NULL);
  exit(0);
}

static _Atomic int hl_sampler_up;  // the thread has run, with the mask it was made with
extern _Atomic int hl_main_thread_gone;  // threads.c

// When the main thread has called pthread_exit and its status cannot be read (the program
// closed the shim's descriptor and lowered its limit so that no other opens): this thread ends
// itself, so that glibc ends the process when the last thread goes, as it does untraced, and
// runs the exit handlers that finish the trace. It waited for ever, and the program, whose last
// thread had gone, never ended (nor did SIGTERM end it, which this thread blocks). What it did
// stops: samples, timed scans, rotation; the events are still all written at the end.
static void retire(void) {
  atomic_store(&hl_sampler_tid, 0);
  hl_sampler_housekeeping(0);
  pthread_exit(NULL);
}

// The leak scan's stop signal (SIGPROF) reaches this thread only while the program handles it.
// With the default action, a SIGPROF sent to the process, whose threads all block it to take
// it with sigwait, came here, the one thread not blocking it, and ended the process. With a
// handler it must: Swift's crash backtracer installs one and at once suspends every thread
// with it (or SIGUSR1 or SIGUSR2, whichever the thread does not block), and said "failed to
// suspend thread" of this one. So the program's sigaction on the signal waits until this
// thread has followed it (hl_stop_signal_changed), 10 ms at most. A scan stops this thread
// with ptrace, or with signals leaves it running (stopworld.c): it runs none of the program's
// code.
static _Atomic uint32_t hl_stop_changes, hl_stop_followed;

static void follow_stop_signal(void) {
  uint32_t changes = atomic_load(&hl_stop_changes);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, hl_stopworld_signal());
  pthread_sigmask(hl_stop_signal_handled() ? SIG_UNBLOCK : SIG_BLOCK, &set, NULL);
  atomic_store(&hl_stop_followed, changes);
  hl_raw(SYS_futex, &hl_stop_followed, FUTEX_WAKE_PRIVATE, INT32_MAX, 0);
}

// After the program set the stop signal's disposition: async-signal-safe (a crash handler
// calls it), raw system calls only.
void hl_stop_signal_changed(void) {
  int32_t sampler = atomic_load(&hl_sampler_tid);
  if (!sampler || sampler == (int32_t)hl_raw(SYS_gettid, 0, 0, 0, 0)) return;
  uint32_t change = atomic_fetch_add(&hl_stop_changes, 1) + 1;
  hl_sampler_wake();
  uint64_t start = hl_raw_monotonic_ns();
  for (uint32_t seen; (int32_t)((seen = atomic_load(&hl_stop_followed)) - change) < 0;) {
    uint64_t waited = hl_raw_monotonic_ns() - start;
    if (waited >= 10 * 1000 * 1000) return;
    struct timespec pause = hl_span(10 * 1000 * 1000 - waited);
    hl_raw(SYS_futex, &hl_stop_followed, FUTEX_WAIT_PRIVATE, seen, &pause);
  }
}

// Set, and its futex woken, when the thread has work that must not wait for its next tick.
static _Atomic uint32_t hl_wake;

// Async-signal-safe (a raw system call, errno untouched): for handlers, and for the stop.
void hl_sampler_wake(void) {
  atomic_store(&hl_wake, 1);
  hl_raw(SYS_futex, &hl_wake, FUTEX_WAKE_PRIVATE, 1, 0);
}

// Sleeps until `due` (hl_now's time) or a wake, whichever comes first.
static void sleep_until(uint64_t due) {
  uint64_t now = hl_now();
  if (due <= now) return;
  struct timespec pause = hl_span(due - now);
  hl_raw(SYS_futex, &hl_wake, FUTEX_WAIT_PRIVATE, 0, &pause);
}

static inline uint64_t min_u64(uint64_t a, uint64_t b) { return a < b ? a : b; }

// What every wake does at once, even inside the gap between two wakes by the clock. A class
// first seen is named now, its hook having woken this thread, not at the next housekeeping: a
// Swift program that crashed within half a second of making its first object of a class left
// its objects as "Category 1025" in the trace that record recovers.
static void after_wake(void) {
  follow_stop_signal();
  // The class's CATEGORY record is in its thread's buffer already: only its name waits here.
  if (hl_swift_present) hl_swift_name_pending(hl_sampler_buffer);
}

enum {
  HL_WAKE_GAP_NS = 10 * 1000 * 1000,     // the least time between two wakes by the clock
  HL_LONGEST_SLEEP_NS = 100 * 1000 * 1000,  // the last-thread check waits no longer
  HL_HOUSEKEEPING_NS = 500 * 1000 * 1000,
};

static void *hl_main(void *arg) {
  (void)arg;
  hold_main_status();
  hl_leaks_sampler_started();
  follow_stop_signal();
  atomic_store(&hl_sampler_up, 1);
  hl_tls.internal = 1;  // what this thread allocates (the Swift runtime, naming) is not traced
  uint64_t tick = (uint64_t)hl_tick_ms * 1000000u, woke = hl_now();
  uint64_t next_sample = woke + tick, next_housekeeping = woke + HL_HOUSEKEEPING_NS;
  while (atomic_load(&hl_running)) {
    // The clock's calibrations too: hl_now, on waking, makes the one due.
    uint64_t due = min_u64(min_u64(next_sample, woke + HL_LONGEST_SLEEP_NS),
                           min_u64(min_u64(hl_leaks_due(), hl_rotate_due()), hl_clock_due()));
    // A scan or a rotation that could not start (another holds the threads) is tried again
    // after the gap, not in a loop; and a storm of leak signals gets a scan a gap at most, as
    // when the thread looked every 10 ms, not one scan after another.
    uint64_t gap_end = woke + HL_WAKE_GAP_NS;
    sleep_until(due > gap_end ? due : gap_end);
    // A wake inside the gap sleeps out the rest of it, but the stop's does not: a program that
    // exited just after a wake waited out the gap in its exit, 10 ms. After each clear of the
    // wake comes what it asked for: a wake cleared unheeded waited out the next sleep, and a
    // program's sigaction with it, up to 10 ms.
    while (hl_now() < gap_end) {
      atomic_store(&hl_wake, 0);
      if (!atomic_load(&hl_running)) break;  // read after the clear: the stop sets it first
      after_wake();
      sleep_until(gap_end);
    }
    atomic_store(&hl_wake, 0);
    if (!atomic_load(&hl_running)) break;
    after_wake();
    woke = hl_now();
    hl_leaks_poll(woke);  // leak scans asked for by a signal or a timer
    int unknown;
    if (alone(&unknown)) exit_as_the_last_thread();
    if (unknown && atomic_load(&hl_main_thread_gone)) retire();
    hl_rotate_poll(hl_now());
    uint64_t now = hl_now();
    if (now < next_sample) continue;
    while (next_sample <= now) next_sample += tick;
    uint64_t rss = hl_read_rss();
    // Marks first: they carry earlier times (a signal's arrival, a timer's exact multiple),
    // and a buffer's records never go back in time, so after the sample they would take its.
    hl_marks_poll(hl_sampler_buffer, now);
    hl_rss_sample(hl_sampler_buffer, now, rss);
    hl_lost_poll(hl_sampler_buffer, now);
    hl_budget_tick(hl_sampler_buffer, now, rss);  // --warn-at and --memory-limit
    if (now >= next_housekeeping || hl_sampler_buffer->len > HL_BUFFER_BYTES / 2) {
      hl_sampler_housekeeping(1);
      hl_flush_all(0);
      next_housekeeping = now + HL_HOUSEKEEPING_NS;
    }
  }
  return NULL;
}

void hl_sampler_start(void) {
  const char *ms = hl_option("HEAPLINE_SAMPLE_MS");
  if (ms && atoi(ms) >= 10) hl_tick_ms = (unsigned)atoi(ms) / 10 * 10;
  atomic_store(&hl_running, 1);
  atomic_store(&hl_wake, 0);
  // The program's signals must never be delivered to the shim's thread (follow_stop_signal
  // says when SIGPROF is).
  sigset_t old;
  hl_block_signals(1, &old);
  hl_program_mask = old;
  hl_tls.guard++;
  atomic_store(&hl_sampler_up, 0);
  hl_started = pthread_create(&hl_thread, NULL, hl_main, NULL) == 0;
  hl_tls.guard--;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  // Until it first runs, a new thread has every signal blocked (glibc blocks them around the
  // clone). A program that crashed meanwhile, a millisecond into its run, found a thread that
  // no signal could suspend: Swift's backtracer said "failed to suspend thread" every time.
  // So the thread is waited for, 50 ms at most.
  int saved_errno = errno;
  for (int i = 0; hl_started && i < 2000 && !atomic_load(&hl_sampler_up); i++) {
    struct timespec pause = {0, 25 * 1000};
    nanosleep(&pause, NULL);
  }
  errno = saved_errno;
}

// From the destructor on whatever thread ends the process: the sampler itself, when the
// program's threads had all gone, may not join itself.
void hl_sampler_stop(void) {
  atomic_store(&hl_running, 0);
  hl_sampler_wake();
  if (hl_started && !pthread_equal(pthread_self(), hl_thread)) pthread_join(hl_thread, NULL);
  hl_started = 0;
  atomic_store(&hl_sampler_tid, 0);
  let_go_of_main_status();
}

// Around a call that a process of one thread only may make (userns.c): the recording goes on,
// without samples meanwhile. No lock: the call succeeds only where no other thread of the
// program runs, to start or end a recording meanwhile.
int hl_sampler_pause(void) {
  int running = hl_started && atomic_load(&hl_state) == HL_ON;
  if (running) hl_sampler_stop();
  return running;
}

void hl_sampler_resume(void) { hl_sampler_start(); }

// In a fork child: the thread is not there, and the status held is the parent's.
void hl_sampler_forget(void) {
  hl_started = 0;
  atomic_store(&hl_sampler_tid, 0);
  let_go_of_main_status();
}
