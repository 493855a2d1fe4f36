// Per-thread buffers: how a thread gets one, how others flush it, and how it is handed back.
//
// There is no limit on threads. A thread that exits hands its buffer back (FREE) and the next
// new thread takes it over. While more than HL_OWN_BUFFERS threads live at once, the others share
// a few buffers (`many`), taking turns through the same IDLE -> BUSY compare-and-swap that
// keeps a flusher out of an owner's buffer; their chunks carry thread id 0.
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "tasks.h"

__thread struct hl_thread hl_tls __attribute__((tls_model("initial-exec")));

enum { HL_OWN_BUFFERS = 1024, HL_SHARED_BUFFERS = 4 };
// Buffers are never unmapped while recording: a flusher may hold a pointer to one while its
// thread exits.
static struct hl_buffer *_Atomic hl_buffers[HL_OWN_BUFFERS + HL_SHARED_BUFFERS];
static _Atomic uint32_t hl_buffer_count;  // own buffers made so far
static _Atomic int hl_many_lock;
static _Atomic uint32_t hl_next_serial = 1;
// The buffer of each recent thread serial, by serial modulo its size, for hl_take_by_serial.
enum { HL_BY_SERIAL = 1024 };
static _Atomic(struct hl_buffer *) hl_by_serial[HL_BY_SERIAL];

// A buffer made ready for a thread, under a new serial.
static void reset_for_thread(struct hl_buffer *b, uint32_t tid) {
  uint32_t serial = atomic_fetch_add(&hl_next_serial, 1);
  hl_buffer_reset(b, serial, tid, atomic_load(&hl_epoch));
  atomic_store(&hl_by_serial[serial % HL_BY_SERIAL], b);
}

// Takes the buffer of thread serial `serial` when its owner is between events, without
// waiting, in a state of its own (NAMING): flushes and rotations, which reset the buffers they
// hold, never take it for theirs. NULL when it is not idle, or no longer that serial's.
struct hl_buffer *hl_take_by_serial(uint32_t serial) {
  struct hl_buffer *b = atomic_load(&hl_by_serial[serial % HL_BY_SERIAL]);
  uint32_t expected = HL_BUF_IDLE;
  if (!b || !atomic_compare_exchange_strong(&b->state, &expected, HL_BUF_NAMING)) return NULL;
  if (b->serial == serial) return b;
  hl_give_back(b);
  return NULL;
}

// Leaves `named` for the thread of serial `serial`, whatever it is doing: read under a live-table
// shard, which hl_finish_pending takes after it.
void hl_name_late(uint32_t serial, uint64_t named) {
  struct hl_buffer *b = atomic_load(&hl_by_serial[serial % HL_BY_SERIAL]);
  if (b && __atomic_load_n(&b->serial, __ATOMIC_RELAXED) == serial)
    atomic_store_explicit(&b->named_late, named, memory_order_relaxed);
}

void hl_give_back(struct hl_buffer *b) {
  uint32_t naming = HL_BUF_NAMING;
  atomic_compare_exchange_strong_explicit(&b->state, &naming, HL_BUF_IDLE, memory_order_release,
                                          memory_order_relaxed);
}
_Atomic uint32_t hl_epoch = 1;  // advanced by every start, so threads drop stale buffers
// A rotation holds every buffer (hl_hold_all); a thread taking a buffer for the first time counts
// itself in `hl_attaching` and waits while `hl_holding_all` is up, so none slips in unseen.
static _Atomic int hl_holding_all, hl_attaching;
static pthread_key_t hl_exit_key;

// A thread that ends gives back the queue its signal handlers' calls waited in, once none waits.
static void drop_deferred_queue(void) {
  if (atomic_load(&hl_tls.deferred_head) != atomic_load(&hl_tls.deferred_tail)) return;
  struct hl_deferred *queue = __atomic_exchange_n(&hl_tls.deferred, NULL, __ATOMIC_ACQ_REL);
  if (queue) hl_unmap(queue, HL_DEFERRED * sizeof *queue);
}

static int hl_have_key;

void hl_finish_pending_for_flush(struct hl_buffer *b);
void hl_drain(struct hl_buffer *b);
static struct hl_buffer *acquire(void);

// Detaches this thread's counts from `b`, unless another thread's took their place.
static void detach_counts(struct hl_buffer *b) {
  struct hl_counts *mine = &hl_tls.counts;
  __atomic_compare_exchange_n(&b->counts, &mine, NULL, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
}

_Atomic int hl_main_thread_gone;  // its exit destructor ran: it called pthread_exit (sampler.c)

static void hl_thread_exit(void *arg) {
  struct hl_buffer *b = arg;
  if (hl_raw(SYS_gettid, 0, 0, 0, 0) == getpid()) atomic_store(&hl_main_thread_gone, 1);
  // A thread that shares a buffer, exiting while sampling, writes what it counted since its last
  // COUNTS: its counts are in its TLS, and nothing else would (a program with 1,100 threads alive
  // at once lost 126,027 of its 4.4 M allocations from its totals).
  if (b->many && hl_sample_bytes && hl_tls.buf == b && hl_tls.epoch == atomic_load(&hl_epoch))
    hl_counts_write(&hl_tls.counts);
  hl_tls.exiting = 1;
  // After a stop the buffer may belong to another thread already; a shared one stays.
  if (hl_tls.buf != b || hl_tls.epoch != atomic_load(&hl_epoch) || b->many) {
    detach_counts(b);
    hl_tls.buf = NULL;
    drop_deferred_queue();
    return;
  }
  hl_tls.guard++;
  // A thread unwound out of one of its events (a cancellation point that the shim does not
  // hold off) holds its buffer still: it would wait for itself.
  uint32_t expected = HL_BUF_IDLE;
  while (!hl_tls.holding && !atomic_compare_exchange_weak(&b->state, &expected, HL_BUF_BUSY)) {
    if (expected == HL_BUF_FREE) break;
    expected = HL_BUF_IDLE;
    sched_yield();
  }
  if (expected != HL_BUF_FREE) {
    // What a signal handler deferred since the thread's last event
    if (hl_deferred_waiting()) hl_drain(b);
    // While the recording stops, the writer is still open, and the final flush, finding this
    // buffer FREE, will not write it: what the thread recorded goes now, or never.
    int state = atomic_load(&hl_state);
    if (state == HL_ON || state == HL_STOPPING) {
      hl_finish_pending_for_flush(b);
      if (b->counts) hl_counts_emit(b, b->counts, hl_now());  // its TLS goes with the thread
      hl_buffer_flush(b);
    }
    b->counts = NULL;
    atomic_store_explicit(&b->state, HL_BUF_FREE, memory_order_release);
  } else {
    detach_counts(b);  // handed back by a stop: the next thread to take it attaches its own
  }
  hl_tls.buf = NULL;
  drop_deferred_queue();  // after the drain: it gives the queue back only when it is empty
  hl_tls.guard--;
}

uint32_t hl_threads_begin_recording(void) { return atomic_fetch_add(&hl_epoch, 1) + 1; }

void hl_threads_init(void) {
  if (!hl_have_key) hl_have_key = pthread_key_create(&hl_exit_key, hl_thread_exit) == 0;
}

// One of the shared buffers, made the first time it is needed; NULL when out of memory.
static struct hl_buffer *shared_buffer(uint32_t tid) {
  _Atomic(struct hl_buffer *) *slot = &hl_buffers[HL_OWN_BUFFERS + tid % HL_SHARED_BUFFERS];
  struct hl_buffer *b = atomic_load(slot);
  if (b && atomic_load(&b->state) != HL_BUF_FREE) return b;
  hl_spin_lock(&hl_many_lock);
  b = atomic_load(slot);
  if (!b) b = hl_shared_new_buffer();
  if (b && atomic_load(&b->state) == HL_BUF_FREE) {  // new, or left over from a recording
    reset_for_thread(b, 0);
    b->many = 1;
    atomic_store(&b->state, HL_BUF_IDLE);
    atomic_store(slot, b);
  }
  hl_spin_unlock(&hl_many_lock);
  return b;
}

static struct hl_buffer *attach(uint32_t tid);

static struct hl_buffer *hl_attach(void) {
  uint32_t tid = (uint32_t)syscall(SYS_gettid);
  for (;;) {
    atomic_fetch_add(&hl_attaching, 1);
    if (HL_LIKELY(!atomic_load(&hl_holding_all))) break;
    atomic_fetch_sub(&hl_attaching, 1);
    while (atomic_load(&hl_holding_all)) sched_yield();
  }
  int held = hl_cancel_hold();  // a new shared buffer opens the memory file
  struct hl_buffer *b = attach(tid);
  hl_cancel_release(held);
  atomic_fetch_sub(&hl_attaching, 1);
  return b;
}

// A thread past its exit destructor takes turns in a shared buffer: its own would never be given
// back. A detached thread frees its own thread-local blocks after the destructors have run (the
// dynamic linker's `free` of its DTV), and each such thread took an own buffer for that free and
// kept it: a program that started detached threads in a loop made the shim's 1,024 buffers, all
// held, within seconds.
static struct hl_buffer *attach(uint32_t tid) {
  struct hl_buffer *b = NULL;
  int own = !hl_tls.exiting;
  uint32_t count = atomic_load(&hl_buffer_count);
  for (uint32_t i = 0; own && i < count && i < HL_OWN_BUFFERS && !b; i++) {
    struct hl_buffer *old = atomic_load(&hl_buffers[i]);  // one whose thread has exited
    uint32_t expected = HL_BUF_FREE;
    if (old && atomic_compare_exchange_strong(&old->state, &expected, HL_BUF_BUSY)) b = old;
  }
  while (own && !b) {
    uint32_t slot = atomic_load(&hl_buffer_count);
    if (slot >= HL_OWN_BUFFERS) break;
    if (!atomic_compare_exchange_weak(&hl_buffer_count, &slot, slot + 1)) continue;
    if (!(b = hl_shared_new_buffer())) {
      atomic_fetch_sub(&hl_buffer_count, 1);
      break;
    }
    atomic_store(&b->state, HL_BUF_BUSY);
    atomic_store(&hl_buffers[slot], b);
    hl_buffers_now(slot + 1);
  }
  hl_tls.epoch = atomic_load(&hl_epoch);
  if (!b) {  // more threads than buffers: take turns in a shared one
    hl_tls.buf = shared_buffer(tid);
    if (hl_tls.buf && hl_sample_bytes && !hl_tls.exiting && hl_have_key) {
      hl_tls.own++;  // its exit writes its counts (hl_thread_exit)
      pthread_setspecific(hl_exit_key, hl_tls.buf);
      hl_tls.own--;
    }
    return hl_tls.buf ? acquire() : NULL;
  }
  reset_for_thread(b, tid);
  b->many = 0;
  hl_counts_attach(b);
  hl_tls.buf = b;
  hl_tls.own++;  // pthread_setspecific may calloc: the shim's own, never the program's
  if (hl_have_key) pthread_setspecific(hl_exit_key, b);
  else b->counts = NULL;  // no exit destructor would detach them
  hl_tls.own--;
  return b;
}

// A signal handler that asks for the buffer while its thread holds it (a mark, a backing store
// reported from a handler) is refused, where it would wait forever for the event it interrupted.
// `holding` is up before the buffer is taken and down only after it is handed back: a handler
// that lands between the two must find it up, or it would wait for its own thread.
struct hl_buffer *hl_acquire(void) {
  if (HL_UNLIKELY(hl_tls.holding)) {
    hl_lost(HL_LOST_INSIDE);
    return NULL;
  }
  hl_tls.holding = 1;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  struct hl_buffer *b = acquire();
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  if (!b) hl_tls.holding = 0;
  return b;
}

// Writes what signal handlers deferred meanwhile, then lets the buffer go.
void hl_release(struct hl_buffer *b) {
  if (HL_UNLIKELY(hl_deferred_waiting())) hl_drain(b);
  atomic_store_explicit(&b->state, HL_BUF_IDLE, memory_order_release);
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  hl_tls.holding = 0;
}

static struct hl_buffer *acquire(void) {
  struct hl_buffer *b = hl_tls.buf;
  if (HL_UNLIKELY(!b || hl_tls.epoch != atomic_load_explicit(&hl_epoch, memory_order_relaxed))) {
    hl_tls.buf = NULL;
    if (atomic_load(&hl_state) != HL_ON) return NULL;
    b = hl_attach();
    if (!b) hl_lost(HL_LOST_MEMORY);
    return b;
  }
  uint32_t expected = HL_BUF_IDLE;
  while (HL_UNLIKELY(!atomic_compare_exchange_weak_explicit(
      &b->state, &expected, HL_BUF_BUSY, memory_order_acquire, memory_order_relaxed))) {
    if (expected == HL_BUF_FREE) return NULL;  // dropped by stop: recording is over
    expected = HL_BUF_IDLE;
    sched_yield();  // a flusher, or a thread sharing it, has it for the length of one event
  }
  if (HL_UNLIKELY(atomic_load_explicit(&hl_state, memory_order_relaxed) != HL_ON)) {
    atomic_store_explicit(&b->state, HL_BUF_IDLE, memory_order_release);
    return NULL;
  }
  return b;
}

// Takes a buffer whose owner is between events and writes out what it holds, leaving it
// FLUSHING. Returns 0, with the state it found, when the buffer was not idle.
static int take_and_write_out(struct hl_buffer *b, uint32_t *found) {
  uint32_t expected = HL_BUF_IDLE;
  if (!atomic_compare_exchange_strong(&b->state, &expected, HL_BUF_FLUSHING)) {
    *found = expected;
    return 0;
  }
  hl_finish_pending_for_flush(b);
  if (b->counts) hl_counts_emit(b, b->counts, hl_now());
  hl_buffer_flush(b);
  return 1;
}

// Flushes every buffer whose owner is between events. With `final`, waits for owners that are
// inside an event, then hands every buffer back, so that nothing is written after the trailer.
void hl_flush_all(int final) {
  uint64_t deadline = final ? hl_monotonic_ns() + 2000000000ull : 0;
  for (uint32_t i = 0; i < HL_OWN_BUFFERS + HL_SHARED_BUFFERS; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    if (!b) continue;
    for (;;) {
      uint32_t expected;
      if (take_and_write_out(b, &expected)) {
        atomic_store(&b->state, final ? HL_BUF_FREE : HL_BUF_IDLE);
        break;
      }
      // Busy owners finish their event within microseconds, and a thread naming the
      // owner's allocation within as much (it writes nothing out: this must). A loaded machine
      // may deschedule one for long, so the wait is by the clock: one that has not finished
      // in two seconds (stopped by a debugger, say) is skipped rather than waited for forever.
      if ((expected != HL_BUF_BUSY && expected != HL_BUF_NAMING) || !final ||
          hl_monotonic_ns() > deadline)
        break;
      sched_yield();
    }
  }
}

// For a rotation (rotate.c): takes every buffer, writing out what it holds, and keeps them all,
// so that no thread is inside an event until hl_release_all. An owner busy for long (stopped by
// a debugger) makes it give up, holding none, and return 0.
int hl_hold_all(void) {
  atomic_store(&hl_holding_all, 1);
  while (atomic_load(&hl_attaching)) sched_yield();
  for (uint32_t i = 0; i < HL_OWN_BUFFERS + HL_SHARED_BUFFERS; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    if (!b) continue;
    for (unsigned tries = 0;; tries++) {
      uint32_t expected;
      if (take_and_write_out(b, &expected)) break;
      if (expected == HL_BUF_FREE) break;  // no thread's: none can take it while this holds
      if (tries > 100000) {
        for (uint32_t j = 0; j < i; j++) {
          struct hl_buffer *held = atomic_load(&hl_buffers[j]);
          uint32_t flushing = HL_BUF_FLUSHING;
          if (held) atomic_compare_exchange_strong(&held->state, &flushing, HL_BUF_IDLE);
        }
        atomic_store(&hl_holding_all, 0);
        return 0;
      }
      sched_yield();
    }
  }
  return 1;
}

// While every buffer is held: each defines its allocation infos again in the next file.
void hl_forget_infos_all(void) {
  for (uint32_t i = 0; i < HL_OWN_BUFFERS + HL_SHARED_BUFFERS; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    if (b) hl_buffer_forget_infos(b);
  }
}

void hl_release_all(void) {
  for (uint32_t i = 0; i < HL_OWN_BUFFERS + HL_SHARED_BUFFERS; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    uint32_t flushing = HL_BUF_FLUSHING;
    if (b) atomic_compare_exchange_strong(&b->state, &flushing, HL_BUF_IDLE);
  }
  atomic_store(&hl_holding_all, 0);
}

// The child of fork() has one thread and the parent's buffers, which in shared memory are the
// very same pages: the child must not write to them, and drops them all unseen.
void hl_threads_after_fork_child(void) {
  for (uint32_t i = 0; i < HL_OWN_BUFFERS + HL_SHARED_BUFFERS; i++)
    hl_shared_drop_buffer(atomic_exchange(&hl_buffers[i], NULL));
  atomic_store(&hl_buffer_count, 0);
  hl_buffers_now(0);
  atomic_store(&hl_holding_all, 0);
  atomic_store(&hl_attaching, 0);
  hl_tls.buf = NULL;
}
