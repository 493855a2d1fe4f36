// The shim's own thread. Every tick it samples RSS; every few ticks it names new Swift types,
// writes the module map if objects were loaded, and flushes idle threads' buffers, so that a
// process killed with SIGKILL leaves a trace readable up to half a second before its death.
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

static pthread_t hl_thread;
static _Atomic int hl_running;
static int hl_started;
static unsigned hl_tick_ms = 100;
struct hl_buffer *hl_sampler_buffer;  // the shim's own buffer, thread serial 0

// Opened for each sample: a descriptor held all run would be one the program cannot have.
uint64_t hl_read_rss(void) {
  int fd = open("/proc/self/statm", O_RDONLY | O_CLOEXEC);
  char text[128];
  ssize_t n = fd < 0 ? -1 : pread(fd, text, sizeof text - 1, 0);
  if (fd >= 0) close(fd);
  if (n <= 0) return 0;
  text[n] = 0;
  const char *p = text;
  while (*p && *p != ' ') p++;  // skip the size field; the second is resident pages
  uint64_t pages = 0;
  for (p++; *p >= '0' && *p <= '9'; p++) pages = pages * 10 + (uint64_t)(*p - '0');
  return pages * (uint64_t)sysconf(_SC_PAGESIZE);
}

// Work that must happen outside the hooks; the caller owns the sampler buffer.
void hl_sampler_housekeeping(void) {
  struct hl_buffer *b = hl_sampler_buffer;
  if (hl_swift_present) hl_swift_name_pending(b);
  hl_modules_emit_if_changed(b, 0);
  hl_buffer_flush(b);
}

static void *hl_main(void *arg) {
  (void)arg;
  hl_tls.internal = 1;  // what this thread allocates (the Swift runtime, naming) is not traced
  hl_leaks_sampler_started();
  unsigned ticks = 0;
  while (atomic_load(&hl_running)) {
    struct timespec pause = {0, 10 * 1000 * 1000};
    nanosleep(&pause, NULL);
    hl_leaks_poll(hl_now());  // leak scans asked for by a signal or a timer
    if (++ticks % (hl_tick_ms / 10) != 0) continue;
    uint64_t now = hl_now(), rss = hl_read_rss();
    // Marks first: they carry earlier times (a signal's arrival, a timer's exact multiple),
    // and a buffer's records never go back in time, so after the sample they would take its.
    hl_marks_poll(hl_sampler_buffer, now);
    hl_emit_rss(hl_sampler_buffer, now, rss);
    hl_lost_poll(hl_sampler_buffer, now);
    hl_budget_tick(hl_sampler_buffer, now, rss);  // --warn-at and --memory-limit
    if (ticks % 50 == 0 || hl_sampler_buffer->len > HL_BUFFER_BYTES / 2) {
      hl_sampler_housekeeping();
      hl_flush_all(0);
    }
  }
  return NULL;
}

void hl_sampler_start(void) {
  const char *ms = hl_option("HEAPLINE_SAMPLE_MS");
  if (ms && atoi(ms) >= 10) hl_tick_ms = (unsigned)atoi(ms) / 10 * 10;
  atomic_store(&hl_running, 1);
  // The program's signals must never be delivered to the shim's thread.
  sigset_t all, old;
  sigfillset(&all);
  sigdelset(&all, hl_stopworld_signal());  // a leak scan must be able to stop it
  pthread_sigmask(SIG_SETMASK, &all, &old);
  hl_tls.guard++;
  hl_started = pthread_create(&hl_thread, NULL, hl_main, NULL) == 0;
  hl_tls.guard--;
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

void hl_sampler_stop(void) {
  atomic_store(&hl_running, 0);
  if (hl_started) pthread_join(hl_thread, NULL);
  hl_started = 0;
}

void hl_sampler_forget(void) { hl_started = 0; }  // in a fork child: the thread is not there
