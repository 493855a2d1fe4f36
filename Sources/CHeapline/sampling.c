// Sampling mode (HEAPLINE_SAMPLE_BYTES=N): the hooks' path when only some allocations are
// recorded. On average one sample every N bytes allocated, Poisson style: each thread counts
// down an exponentially distributed number of bytes, and the allocation that crosses zero is
// recorded with its stack, as in a full trace. Since the gaps are memoryless, an allocation of
// `size` bytes is sampled with probability 1 - exp(-size/N) whatever came before it, which is
// what the reader's weights undo.
//
// Every other allocation costs no unwind and no event: it is counted in the thread's
// `hl_counts`, which reach the trace as COUNTS records (TraceFormat.md). A free cannot know its
// block's requested size, so live bytes are counted in usable bytes (malloc_usable_size) on both
// sides; the requested bytes allocated are counted too.
//
// A free must find out whether its block was sampled. Sampled blocks are few (one every N
// bytes), so a table of one-byte counters indexed by a hash of the address (64 KiB, which stays
// in cache) answers "certainly not" for almost every free with one load, and only the rest
// look in the live table. A counter that reaches 255 stays there: its slot then always looks.
#include <errno.h>
#include <malloc.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

extern void *__libc_realloc(void *, size_t);

uint64_t hl_sample_bytes;  // 0: every allocation is recorded
enum { HL_FILTER_BITS = 16, HL_COUNTS_EVERY_OPS = 256, HL_COUNTS_EVERY_NS = 1000 * 1000,
       HL_COUNTS_EVERY_BYTES = 64 << 10, HL_FILTER_STUCK = 255 };
static _Atomic uint8_t *hl_filter;  // sampled live blocks per address hash

void hl_sample_record_alloc(void *p, size_t size);
int hl_sample_record_free(void *p, int emit, struct hl_block *out);
void hl_sample_emit_free(const struct hl_block *blk);
void hl_finish_pending_for_flush(struct hl_buffer *b);

static inline _Atomic uint8_t *filter_slot(const void *p) {
  return &hl_filter[((uint64_t)(uintptr_t)p >> 4) * 0x9E3779B97F4A7C15ull >> (64 - HL_FILTER_BITS)];
}

static void filter_add(_Atomic uint8_t *slot) {
  uint8_t v = atomic_load_explicit(slot, memory_order_relaxed);
  while (v != HL_FILTER_STUCK &&
         !atomic_compare_exchange_weak_explicit(slot, &v, (uint8_t)(v + 1), memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

static void filter_remove(_Atomic uint8_t *slot) {
  uint8_t v = atomic_load_explicit(slot, memory_order_relaxed);
  while (v != HL_FILTER_STUCK && v != 0 &&
         !atomic_compare_exchange_weak_explicit(slot, &v, (uint8_t)(v - 1), memory_order_relaxed,
                                                memory_order_relaxed)) {
  }
}

// Reads HEAPLINE_SAMPLE_BYTES when a recording begins; 0 when it is unset.
// What the COUNTS records written so far add up to: usable bytes and blocks live. A rotation
// starts its next file with them (CARRIED_COUNTS), as it starts it with the sampled live blocks.
static _Atomic uint64_t hl_written_usable, hl_written_blocks;

void hl_sampling_begin(void) {
  atomic_store(&hl_written_usable, 0);
  atomic_store(&hl_written_blocks, 0);
  hl_sample_bytes = (uint64_t)hl_option_long("HEAPLINE_SAMPLE_BYTES", 0, 1, 1L << 40);
  if (hl_sample_bytes && !hl_filter) {
    hl_filter = hl_map((size_t)1 << HL_FILTER_BITS);
    if (!hl_filter) hl_sample_bytes = 0;  // cannot tell sampled frees: record everything
  }
  if (hl_filter) for (uint32_t i = 0; i < 1u << HL_FILTER_BITS; i++) atomic_store(&hl_filter[i], 0);
}

// SplitMix64: one step seeds, xorshift64* draws. The seed mixes the clock, the thread id and
// where this thread's TLS lies, so runs and threads differ without asking libc (whose random
// functions take a lock a hook must not).
static uint64_t mix(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

static uint64_t next_random(struct hl_counts *c) {
  if (HL_UNLIKELY(!c->rng)) {
    uint64_t seed = hl_monotonic_ns() ^ ((uint64_t)syscall(SYS_gettid) << 32) ^
                    (uint64_t)(uintptr_t)&hl_tls;
    c->rng = mix(seed + 0x9E3779B97F4A7C15ull) | 1;
  }
  c->rng ^= c->rng >> 12;
  c->rng ^= c->rng << 25;
  c->rng ^= c->rng >> 27;
  return c->rng * 0x2545F4914F6CDD1Dull;
}

// ln(x) for x in (0, 1]: the shim does not link libm. x = m * 2^e with m in [0.75, 1.5), then
// ln(m) = 2 atanh(t), t = (m - 1) / (m + 1), |t| < 0.2: the series to t^17 is exact to 1e-13.
static double natural_log(double x) {
  union { double d; uint64_t u; } v = {.d = x};
  int e = (int)((v.u >> 52) & 0x7FF) - 1023;
  v.u = (v.u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull;  // m in [1, 2)
  if (v.d >= 1.5) {
    v.d *= 0.5;
    e++;
  }
  double t = (v.d - 1) / (v.d + 1), t2 = t * t, term = t, sum = 0;
  for (int k = 1; k <= 17; k += 2) {
    sum += term / k;
    term *= t2;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

// Bytes until the next sample: exponential with mean N.
static int64_t draw_gap(struct hl_counts *c) {
  double u = ((next_random(c) >> 11) + 1) * (1.0 / 9007199254740992.0);  // (0, 1]
  double gap = -natural_log(u) * (double)hl_sample_bytes;
  return gap >= 9.0e18 ? INT64_MAX : (int64_t)gap + 1;
}

// Writes what this thread counted since its last COUNTS record, up to the totals `v`; the caller
// holds `b`.
static void emit_upto(struct hl_buffer *b, struct hl_counts *c, const uint64_t *v, uint64_t now) {
  int any = 0;
  for (int i = 0; i < HL_COUNT_FIELDS; i++) any |= v[i] != c->sent[i];
  if (!any) return;
  hl_ensure(b, 1 + (1 + HL_COUNT_FIELDS) * 10);
  hl_put_u8(b, HL_TAG_COUNTS);
  hl_put_time(b, now);
  for (int i = 0; i < HL_COUNT_FIELDS; i++) {
    hl_put_varint(b, v[i] - c->sent[i]);
  }
  atomic_fetch_add_explicit(&hl_written_usable,
                            (v[HL_COUNT_USABLE_IN] - c->sent[HL_COUNT_USABLE_IN]) -
                                (v[HL_COUNT_USABLE_OUT] - c->sent[HL_COUNT_USABLE_OUT]),
                            memory_order_relaxed);
  atomic_fetch_add_explicit(&hl_written_blocks,
                            (v[HL_COUNT_ALLOCS] - c->sent[HL_COUNT_ALLOCS]) -
                                (v[HL_COUNT_FREES] - c->sent[HL_COUNT_FREES]),
                            memory_order_relaxed);
  for (int i = 0; i < HL_COUNT_FIELDS; i++) c->sent[i] = v[i];
  hl_commit_record(b);
  c->sent_time = now;
}

void hl_counts_emit(struct hl_buffer *b, struct hl_counts *c, uint64_t now) {
  uint64_t v[HL_COUNT_FIELDS];
  for (int i = 0; i < HL_COUNT_FIELDS; i++) v[i] = __atomic_load_n(&c->total[i], __ATOMIC_RELAXED);
  emit_upto(b, c, v, now);
}

// What is held and never written (a recording that stops first) is lost to no one: `sent` moves
// only when a record is written, so the next COUNTS carries it.
void hl_counts_hold(struct hl_buffer *b, struct hl_counts *c) {
  for (int i = 0; i < HL_COUNT_FIELDS; i++)
    b->held[i] = __atomic_load_n(&c->total[i], __ATOMIC_RELAXED);
  b->held_from = c;
}

void hl_counts_emit_held(struct hl_buffer *b, uint64_t now) {
  struct hl_counts *c = b->held_from;
  b->held_from = NULL;
  if (c) emit_upto(b, c, b->held, now);
}

// CARRIED_COUNTS: the live figures of every COUNTS record so far, signed (zigzag), at `now`.
void hl_counts_emit_carried(struct hl_buffer *b, uint64_t now) {
  hl_ensure(b, 1 + 3 * 10);
  hl_put_u8(b, HL_TAG_CARRIED_COUNTS);
  hl_put_time(b, now);
  hl_put_varint(b, hl_zigzag((int64_t)atomic_load(&hl_written_usable)));
  hl_put_varint(b, hl_zigzag((int64_t)atomic_load(&hl_written_blocks)));
  hl_commit_record(b);
}

// A thread's own buffer, new to it: a flush may write its counts from now on. What it counted
// before its first event is this recording's too (counting starts when recording does), so
// `sent` stays where it was.
// Only while sampling, and never for a thread past its exit destructor (another key's destructor
// may allocate after ours ran, and nothing then detaches a buffer before the TLS goes away).
void hl_counts_attach(struct hl_buffer *b) {
  b->counts = b->many || !hl_sample_bytes || hl_tls.exiting ? NULL : &hl_tls.counts;
}

static inline void bump(struct hl_counts *c, int field, uint64_t by) {
  __atomic_store_n(&c->total[field], c->total[field] + by, __ATOMIC_RELAXED);
}

// Every so many calls, a thread whose counts are a millisecond old writes them. A thread's
// first call takes its buffer at once, which registers its exit (threads.c): a thread that
// makes a few calls and exits has its counts written then.
// A thread past its exit destructor writes them at every call: nothing else would before its TLS
// goes (detached threads free other threads' thread-local blocks then: a program that started
// 3,000 of them had 1,993 frees missing from its totals).
HL_HOOK static void counts_tick(struct hl_counts *c) {
  uint64_t now = hl_now();
  if (hl_tls.buf && !hl_tls.exiting && now - c->sent_time < HL_COUNTS_EVERY_NS) return;
  hl_counts_write(c);
}

// Whether the thread's live bytes have moved by HL_COUNTS_EVERY_BYTES since its last COUNTS.
// Then it writes them at once: a thread that allocates a few hundred calls' worth and waits (at
// a barrier, say) wrote nothing until the next flush, half a second on, and a peak in between
// went unseen (8 threads of 64 blocks of 50 kB each: 2.9 MiB of a 24.4 MiB peak). So every
// thread's unwritten part of the peak stays under this bound. `sent` may be written meanwhile by
// a flush of the thread's buffer: a stale read costs one record more or one later.
HL_HOOK static inline int live_moved(const struct hl_counts *c) {
  int64_t in = (int64_t)(c->total[HL_COUNT_USABLE_IN] -
                         __atomic_load_n(&c->sent[HL_COUNT_USABLE_IN], __ATOMIC_RELAXED));
  int64_t out = (int64_t)(c->total[HL_COUNT_USABLE_OUT] -
                          __atomic_load_n(&c->sent[HL_COUNT_USABLE_OUT], __ATOMIC_RELAXED));
  return in - out >= HL_COUNTS_EVERY_BYTES || out - in >= HL_COUNTS_EVERY_BYTES;
}

// After each counted call: writes the counts at once when the live bytes moved far, or every
// so many calls once they are a millisecond old.
HL_HOOK static inline void counts_after_call(struct hl_counts *c) {
  if (HL_UNLIKELY(live_moved(c))) hl_counts_write(c);
  else if (HL_UNLIKELY(++c->ops % HL_COUNTS_EVERY_OPS == 1 || hl_tls.exiting)) counts_tick(c);
}

// Writes what the calling thread counted since its last COUNTS record, through its buffer.
void hl_counts_write(struct hl_counts *c) {
  int saved_errno = errno;
  hl_enter();
  struct hl_buffer *b = hl_acquire();
  if (b) {
    hl_finish_pending_for_flush(b);  // the last sampled ALLOC goes first: it is older
    hl_counts_emit(b, c, hl_now());  // after any wait for a shared buffer
    hl_release(b);
  }
  hl_leave();
  errno = saved_errno;
}

HL_HOOK void hl_sample_alloc(void *p, size_t size) {
  struct hl_counts *c = &hl_tls.counts;
  bump(c, HL_COUNT_ALLOCS, 1);
  bump(c, HL_COUNT_BYTES, size);
  bump(c, HL_COUNT_USABLE_IN, hl_usable_size(p));
  c->countdown -= (int64_t)size;
  if (HL_UNLIKELY(c->countdown <= 0)) {
    // A thread's first call draws its first gap, then counts down from it like any other.
    if (HL_UNLIKELY(c->rng == 0)) c->countdown = draw_gap(c) - (int64_t)size;
    if (c->countdown <= 0) {
      c->countdown = draw_gap(c);  // memoryless: a fresh gap from here
      filter_add(filter_slot(p));
      hl_sample_record_alloc(p, size);  // past its exit destructor, with its counts
      return;
    }
  }
  counts_after_call(c);
}

// Before the real free: a sampled block's FREE is written.
HL_HOOK void hl_sample_free(void *p) {
  struct hl_counts *c = &hl_tls.counts;
  bump(c, HL_COUNT_FREES, 1);
  bump(c, HL_COUNT_USABLE_OUT, hl_usable_size(p));
  _Atomic uint8_t *slot = filter_slot(p);
  if (HL_UNLIKELY(atomic_load_explicit(slot, memory_order_relaxed) != 0) &&
      hl_sample_record_free(p, 1, NULL))
    filter_remove(slot);
  counts_after_call(c);
}

// realloc in sampling mode: the old block is freed and the new one allocated, as two calls
// would be. A sampled old block leaves the live table before the real realloc, whose address
// another thread may be given at once, and goes back if the realloc fails.
HL_HOOK void *hl_sample_realloc(void *old, size_t size) {
  uint64_t old_usable = hl_usable_size(old);
  _Atomic uint8_t *slot = filter_slot(old);
  struct hl_block blk;
  int had = atomic_load_explicit(slot, memory_order_relaxed) != 0 &&
            hl_sample_record_free(old, 0, &blk);
  void *p = __libc_realloc(old, size);
  if (!p) {
    if (had) hl_live_put_back(&blk);
    return NULL;
  }
  struct hl_counts *c = &hl_tls.counts;
  bump(c, HL_COUNT_FREES, 1);
  bump(c, HL_COUNT_USABLE_OUT, old_usable);
  if (had) {
    filter_remove(slot);
    hl_sample_emit_free(&blk);
  }
  hl_sample_alloc(p, size);
  return p;
}
