// Per-thread buffers: how a thread gets one, how others flush it, and how it is handed back.
#include <pthread.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

__thread struct hl_thread hl_tls __attribute__((tls_model("initial-exec")));

enum { HL_MAX_THREADS = 4096 };
// Buffers are never unmapped: a flusher may hold a pointer to one while its thread exits. A
// thread that exits hands its buffer back (FREE) and the next new thread takes it over.
static struct hl_buffer *_Atomic hl_buffers[HL_MAX_THREADS];
static _Atomic uint32_t hl_buffer_count;
static _Atomic uint32_t hl_next_serial = 1;
_Atomic uint32_t hl_epoch = 1;  // advanced by every start, so threads drop stale buffers
static pthread_key_t hl_exit_key;
static int hl_have_key;

void hl_finish_pending_for_flush(struct hl_buffer *b);

static void hl_thread_exit(void *arg) {
  struct hl_buffer *b = arg;
  // After a stop the buffer may belong to another thread already.
  if (hl_tls.buf != b || hl_tls.epoch != atomic_load(&hl_epoch)) return;
  hl_tls.guard++;
  uint32_t expected = HL_BUF_IDLE;
  while (!atomic_compare_exchange_weak(&b->state, &expected, HL_BUF_BUSY)) {
    if (expected == HL_BUF_FREE) break;
    expected = HL_BUF_IDLE;
    sched_yield();
  }
  if (expected != HL_BUF_FREE) {
    if (atomic_load(&hl_state) == HL_ON) {
      hl_finish_pending_for_flush(b);
      hl_buffer_flush(b);
    }
    atomic_store_explicit(&b->state, HL_BUF_FREE, memory_order_release);
  }
  hl_tls.buf = NULL;
  hl_tls.guard--;
}

void hl_threads_begin_recording(void) { atomic_fetch_add(&hl_epoch, 1); }

void hl_threads_init(void) {
  if (!hl_have_key) hl_have_key = pthread_key_create(&hl_exit_key, hl_thread_exit) == 0;
}

static struct hl_buffer *hl_attach(void) {
  uint32_t serial = atomic_fetch_add(&hl_next_serial, 1);
  uint32_t tid = (uint32_t)syscall(SYS_gettid);
  struct hl_buffer *b = NULL;
  uint32_t count = atomic_load(&hl_buffer_count);
  for (uint32_t i = 0; i < count && i < HL_MAX_THREADS && !b; i++) {
    struct hl_buffer *old = atomic_load(&hl_buffers[i]);  // one whose thread has exited
    uint32_t expected = HL_BUF_FREE;
    if (old && atomic_compare_exchange_strong(&old->state, &expected, HL_BUF_BUSY)) b = old;
  }
  if (!b) {
    uint32_t slot = atomic_fetch_add(&hl_buffer_count, 1);
    if (slot >= HL_MAX_THREADS) return NULL;  // recording goes on for the other threads
    if (!(b = hl_map(sizeof *b))) return NULL;
    atomic_store(&b->state, HL_BUF_BUSY);
    atomic_store(&hl_buffers[slot], b);
  }
  hl_buffer_reset(b, serial, tid);
  hl_tls.buf = b;
  hl_tls.epoch = atomic_load(&hl_epoch);
  if (hl_have_key) pthread_setspecific(hl_exit_key, b);  // may calloc: the guard is up
  return b;
}

struct hl_buffer *hl_acquire(void) {
  struct hl_buffer *b = hl_tls.buf;
  if (HL_UNLIKELY(!b || hl_tls.epoch != atomic_load_explicit(&hl_epoch, memory_order_relaxed))) {
    hl_tls.buf = NULL;
    return atomic_load(&hl_state) == HL_ON ? hl_attach() : NULL;
  }
  uint32_t expected = HL_BUF_IDLE;
  while (HL_UNLIKELY(!atomic_compare_exchange_weak_explicit(
      &b->state, &expected, HL_BUF_BUSY, memory_order_acquire, memory_order_relaxed))) {
    if (expected == HL_BUF_FREE) return NULL;  // dropped by stop: recording is over
    expected = HL_BUF_IDLE;
    sched_yield();  // a flusher has it for the length of one write
  }
  if (HL_UNLIKELY(atomic_load_explicit(&hl_state, memory_order_relaxed) != HL_ON)) {
    hl_release(b);
    return NULL;
  }
  return b;
}

void hl_release(struct hl_buffer *b) {
  atomic_store_explicit(&b->state, HL_BUF_IDLE, memory_order_release);
}

// Flushes every buffer whose owner is between events. With `final`, waits for owners that are
// inside an event, then hands every buffer back, so that nothing is written after the trailer.
void hl_flush_all(int final) {
  uint32_t count = atomic_load(&hl_buffer_count);
  if (count > HL_MAX_THREADS) count = HL_MAX_THREADS;
  for (uint32_t i = 0; i < count; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    if (!b) continue;
    for (unsigned tries = 0;; tries++) {
      uint32_t expected = HL_BUF_IDLE;
      if (atomic_compare_exchange_strong(&b->state, &expected, HL_BUF_FLUSHING)) {
        hl_finish_pending_for_flush(b);
        hl_buffer_flush(b);
        atomic_store(&b->state, final ? HL_BUF_FREE : HL_BUF_IDLE);
        break;
      }
      // Busy owners finish their event within microseconds; one that does not (stopped by
      // a debugger, say) is skipped rather than waited for forever.
      if (expected != HL_BUF_BUSY || !final || tries > 100000) break;
      sched_yield();
    }
  }
}

// The child of fork() has one thread and a copy of every buffer: the copies hold the parent's
// events, which the parent will write itself, so the child drops them all.
void hl_threads_after_fork_child(void) {
  uint32_t count = atomic_load(&hl_buffer_count);
  if (count > HL_MAX_THREADS) count = HL_MAX_THREADS;
  for (uint32_t i = 0; i < count; i++) {
    struct hl_buffer *b = atomic_load(&hl_buffers[i]);
    if (b) atomic_store(&b->state, HL_BUF_FREE);
  }
  hl_tls.buf = NULL;
}
