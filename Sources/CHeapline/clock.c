// The recording's clock: nanoseconds since the recording started, read at every event.
//
// clock_gettime took about 60 ns here (a KVM guest whose clocksource is the TSC), a sixth of
// what recording a malloc/free pair cost; reading the time-stamp counter alone takes 26 ns.
// Where the kernel keeps time with the TSC itself (clocksource "tsc", which it chooses only for
// an invariant counter that is synchronised across CPUs), the shim reads the counter and scales
// it to CLOCK_MONOTONIC. The scale is measured against clock_gettime 2 ms after the start, and
// again at doubling intervals up to every 4 s; each time it is steered to meet CLOCK_MONOTONIC
// at the next calibration rather than jump to it, so the mapping stays continuous and
// increasing (a thread's times never go backwards) and within microseconds of the kernel's
// clock, whatever NTP does to it. Before the first calibration, and wherever the clocksource is
// not the TSC, every read is clock_gettime.
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#if defined(__x86_64__)
#include <x86intrin.h>
#define HL_HAVE_TSC 1
#else
#define HL_HAVE_TSC 0
#endif

uint64_t hl_start_ns;

uint64_t hl_monotonic_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t since_start(uint64_t ns) { return ns > hl_start_ns ? ns - hl_start_ns : 0; }

#if HL_HAVE_TSC
enum { HL_FIRST_INTERVAL_NS = 2000000, HL_BRACKET_NS = 4000 };
#define HL_LAST_INTERVAL_NS 4000000000ull

// The mapping from counter to time, under a sequence lock: a reader that saw a writer at work
// takes the slow path. `mult` is nanoseconds per tick in 32.32 fixed point, 0 while there is no
// mapping yet; `next` is the counter's value at the next calibration.
static struct {
  _Atomic uint32_t seq;
  _Atomic uint64_t tsc, ns, mult, next;
} hl_mapping;

// The rest is written only by the thread that holds hl_calibrating.
static _Atomic int hl_calibrating;
static int hl_tsc_usable = -1;  // the kernel's clocksource is the TSC; -1 not yet looked at
static uint64_t hl_anchor_tsc, hl_anchor_ns;  // taken at the start: the long baseline's origin
static uint64_t hl_interval_ns;
static unsigned hl_loose_brackets;  // calibrations given up in a row for a loose bracket
// When the next calibration is due, in hl_now's time, for the shim's thread to wake then: past
// it, the mapping keeps the rate it was steered by to meet the kernel's clock there, and drifts
// (a wake 90 ms late left an idle program's next stamp 70 µs early).
static _Atomic uint64_t hl_calibration_due;

static int clocksource_is_tsc(void) {
  int fd = open("/sys/devices/system/clocksource/clocksource0/current_clocksource",
                O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  char name[16] = {0};
  ssize_t n = read(fd, name, sizeof name - 1);
  close(fd);
  return n == 4 && memcmp(name, "tsc\n", 4) == 0;
}

static void publish(uint64_t tsc, uint64_t ns, uint64_t mult, uint64_t next) {
  uint32_t seq = atomic_load_explicit(&hl_mapping.seq, memory_order_relaxed);
  atomic_store_explicit(&hl_mapping.seq, seq + 1, memory_order_relaxed);
  atomic_thread_fence(memory_order_release);
  atomic_store_explicit(&hl_mapping.tsc, tsc, memory_order_relaxed);
  atomic_store_explicit(&hl_mapping.ns, ns, memory_order_relaxed);
  atomic_store_explicit(&hl_mapping.mult, mult, memory_order_relaxed);
  atomic_store_explicit(&hl_mapping.next, next, memory_order_relaxed);
  atomic_store_explicit(&hl_mapping.seq, seq + 2, memory_order_release);
}

// The time at counter value `t` by the current mapping. `*ok` is 0 when there is no mapping, a
// writer was at work, or (with `check_next`) the mapping is due for calibration.
static inline uint64_t mapped(uint64_t t, int check_next, int *ok) {
  uint32_t seq = atomic_load_explicit(&hl_mapping.seq, memory_order_acquire);
  uint64_t tsc = atomic_load_explicit(&hl_mapping.tsc, memory_order_relaxed);
  uint64_t ns = atomic_load_explicit(&hl_mapping.ns, memory_order_relaxed);
  uint64_t mult = atomic_load_explicit(&hl_mapping.mult, memory_order_relaxed);
  uint64_t next = atomic_load_explicit(&hl_mapping.next, memory_order_relaxed);
  atomic_thread_fence(memory_order_acquire);
  *ok = !(seq & 1) && mult && atomic_load_explicit(&hl_mapping.seq, memory_order_relaxed) == seq &&
        (!check_next || t < next);
  uint64_t ticks = t > tsc ? t - tsc : 0;  // a core whose counter reads a little behind
  return ns + (uint64_t)(((unsigned __int128)ticks * mult) >> 32);
}

// Measures the counter's rate over the whole time since the start, and publishes a mapping that
// starts where the current one stands now and meets CLOCK_MONOTONIC one interval later.
static void calibrate(void) {
  uint64_t before = hl_monotonic_ns();
  uint64_t t = __rdtsc();
  uint64_t after = hl_monotonic_ns();
  // A thread preempted between the two reads knows the counter's time only roughly: the next
  // read of the clock tries again, but not forever, or every read would stay on this path.
  if (after - before > HL_BRACKET_NS && ++hl_loose_brackets < 16) return;
  hl_loose_brackets = 0;
  uint64_t truth = since_start(before + (after - before) / 2);
  if (t <= hl_anchor_tsc || truth <= hl_anchor_ns) return;
  double rate = (double)(truth - hl_anchor_ns) / (double)(t - hl_anchor_tsc);  // ns per tick
  int ok;
  uint64_t now = mapped(t, 0, &ok);
  if (!ok) now = truth;  // the first mapping starts from the kernel's clock itself
  double interval = (double)hl_interval_ns;
  double steered = rate * ((double)truth + interval - (double)now) / interval;
  if (steered < rate / 2) steered = rate / 2;
  if (steered > rate * 2) steered = rate * 2;
  publish(t, now, (uint64_t)(steered * 4294967296.0), t + (uint64_t)(interval / rate));
  atomic_store_explicit(&hl_calibration_due, now + (uint64_t)interval, memory_order_relaxed);
  if (hl_interval_ns < HL_LAST_INTERVAL_NS) hl_interval_ns *= 2;
}

// Whether the mapping is due for calibration: there is none yet and the first interval has
// passed, or the counter has reached the next calibration and no other thread has done it.
static int due(void) {
  int fresh;
  mapped(__rdtsc(), 1, &fresh);
  if (fresh) return 0;
  if (atomic_load_explicit(&hl_mapping.mult, memory_order_relaxed)) return 1;
  return since_start(hl_monotonic_ns()) >= hl_anchor_ns + HL_FIRST_INTERVAL_NS;
}

static uint64_t hl_now_slow(void) {
  if (hl_tsc_usable > 0 && !atomic_exchange_explicit(&hl_calibrating, 1, memory_order_acquire)) {
    if (due()) calibrate();
    atomic_store_explicit(&hl_calibrating, 0, memory_order_release);
  }
  int ok;
  uint64_t now = mapped(__rdtsc(), 0, &ok);
  return ok ? now : since_start(hl_monotonic_ns());
}

uint64_t hl_now(void) {
  int ok;
  uint64_t now = mapped(__rdtsc(), 1, &ok);
  return HL_LIKELY(ok) ? now : hl_now_slow();
}

// A new recording's clock. A calibration under way in another thread is waited for, but not
// forever: in a forked child the thread that held the flag is gone.
void hl_clock_start(void) {
  for (int spins = 0; spins < 1 << 20; spins++)
    if (!atomic_exchange_explicit(&hl_calibrating, 1, memory_order_acquire)) break;
  if (hl_tsc_usable < 0) hl_tsc_usable = clocksource_is_tsc();
  publish(0, 0, 0, 0);
  uint64_t before, after;
  for (int tries = 0; tries < 8; tries++) {  // a tight bracket, as in calibrate()
    before = hl_monotonic_ns();
    hl_anchor_tsc = __rdtsc();
    after = hl_monotonic_ns();
    if (after - before <= HL_BRACKET_NS) break;
  }
  hl_start_ns = before;
  hl_anchor_ns = (after - before) / 2;
  hl_interval_ns = HL_FIRST_INTERVAL_NS;
  hl_loose_brackets = 0;
  atomic_store_explicit(&hl_calibration_due, hl_tsc_usable > 0 ? hl_anchor_ns + HL_FIRST_INTERVAL_NS
                                                               : UINT64_MAX,
                        memory_order_relaxed);
  atomic_store_explicit(&hl_calibrating, 0, memory_order_release);
}

uint64_t hl_clock_due(void) {
  return atomic_load_explicit(&hl_calibration_due, memory_order_relaxed);
}

#else

uint64_t hl_clock_due(void) { return UINT64_MAX; }

uint64_t hl_now(void) { return since_start(hl_monotonic_ns()); }

void hl_clock_start(void) { hl_start_ns = hl_monotonic_ns(); }

#endif
