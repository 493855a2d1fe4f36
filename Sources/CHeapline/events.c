// What a hook does once it has decided to record: the slow path behind hooks.c.
//
// An event holds its thread's buffer, and for a moment a live-table shard or the stack table.
// A signal handler that allocates or frees while its thread is inside an event must touch none
// of them, so its call is deferred: kept in the thread's queue with its time and stack, and
// written by the event it interrupted, just before that event ends. A deferred free also waits
// for the real free until then, so that no other thread can be given the address meanwhile.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "unwind.h"

extern void __libc_free(void *);

// The category of a block whose header names a class seen before, with its info from the
// thread's cache: what hl_live_name may ask while it holds the block's shard, as neither takes
// a lock.
HL_HOOK static int name_known(const uint64_t words[2], void *context, uint32_t *category,
                              uint32_t *info) {
  struct hl_buffer *b = context;
  if (!hl_swift_classify_known(words, category)) return 0;
  *info = *category ? hl_info_cached(b->infos, b->pending.size, b->pending.stack, *category) : 0;
  return !*category || *info;
}

// Writes the thread's previous allocation. It waited until now so that a Swift object's header,
// which swift_allocObject fills in after malloc returns, can be read to name its class. A class
// seen before is named in one hold of the block's shard; a new one, or an info not in the
// thread's cache, takes locks of its own, so the shard is let go first and taken again.
HL_HOOK static void hl_finish_pending(struct hl_buffer *b) {
  struct hl_pending *p = &b->pending;
  if (!p->valid) return;
  if (hl_swift_present && p->category == 0 && p->size >= 16) {
    uint64_t words[2];
    uint32_t cat = 0, info = 0;
    int named = hl_live_name(p->addr, b->serial, p->counter, words, name_known, b, &cat, &info);
    if (!named) {  // freed by another thread meanwhile, which named it then if it could
      uint64_t late = atomic_exchange_explicit(&b->named_late, 0, memory_order_relaxed);
      cat = late >> 16 == hl_late_key(b->serial, p->counter) ? (uint32_t)(late & 0xFFFF) : 0;
      info = cat ? hl_info_intern(b->infos, p->size, p->stack, cat) : 0;
      named = cat && info;
    }
    if (named == 2) {
      cat = hl_swift_classify_in(b, p->size, words);
      info = cat ? hl_info_intern(b->infos, p->size, p->stack, cat) : 0;
      if (!cat || !hl_live_set_category(p->addr, p->counter, cat, info)) cat = 0;
    }
    if (named && cat) {
      p->category = cat;
      p->info = info;
    }
  }
  hl_emit_alloc_pending(b);
  p->valid = 0;
}

// Called by the sampler and at flush time for buffers whose owner is not running.
void hl_finish_pending_for_flush(struct hl_buffer *b) { hl_finish_pending(b); }

HL_HOOK static void hl_record_alloc(struct hl_buffer *b, uint64_t addr, uint64_t size,
                                    uint64_t now, uint32_t stack, uint32_t scope) {
  struct hl_block blk = {.addr = addr, .size = size, .counter = b->next_alloc,
                         .serial = b->serial, .stack = stack, .category = scope,
                         .info = hl_info_intern(b->infos, size, stack, scope)};
  struct hl_block evicted;
  int had_evicted = 0;
  hl_live_insert(&blk, &evicted, &had_evicted);
  // The address is live in the table already: its free went unseen. Close the old block so it
  // is not leaked.
  if (had_evicted) hl_emit_free(b, now, &evicted);
  // glibc carves a run of allocations from the top of the heap one after another, so the next
  // block most likely starts where this chunk ends (16-byte granules, an 8-byte header, 32 at
  // least): loading its slot now gives the cache miss a whole allocation's time to land.
  uint64_t chunk = (size + 8 + 15) & ~(uint64_t)15;
  hl_live_prefetch(addr + (chunk < 32 ? 32 : chunk));
  b->pending = (struct hl_pending){.addr = addr, .size = size, .time = now,
                                   .counter = blk.counter, .stack = stack,
                                   .category = blk.category, .valid = 1, .info = blk.info};
  const void *watched = atomic_load_explicit(&hl_watched_task, memory_order_relaxed);
  if (HL_UNLIKELY(watched != NULL)) hl_watch_note(watched, b->serial, blk.counter);
  b->next_alloc++;
}

// A Swift object of a class not seen before, that another thread frees before its own thread's
// next call, which would have read its header: its class is named now, from the header that is
// whole until the real free, into its thread's pending allocation, when that thread is between
// events (as a flush takes its buffer). A known class is left in named_late (below).
HL_HOOK static void name_for_its_thread(const struct hl_block *blk) {
  uint64_t words[2];
  uint32_t cat = 0;
  memcpy(words, (const void *)(uintptr_t)blk->addr, sizeof words);
  if (hl_swift_classify_known(words, &cat) && !cat) return;
  struct hl_buffer *owner = hl_take_by_serial(blk->serial);
  if (!owner) return;
  struct hl_pending *p = &owner->pending;
  if (p->valid && p->addr == blk->addr && p->counter == blk->counter && p->category == 0) {
    if (!cat) cat = hl_swift_classify_in(owner, p->size, words);
    uint32_t info = cat ? hl_info_intern(owner->infos, p->size, p->stack, cat) : 0;
    if (info) {
      p->category = cat;
      p->info = info;
    }
  }
  hl_give_back(owner);
}

// Another thread's unnamed Swift object, freed by this one: named from its header (whole until
// the real free) for its thread, which may be inside an event, past the point where it would
// have named it (hl_take_by_serial cannot take its buffer), and about to find the block gone.
// Done while the block's shard is held, which that thread takes to look for the block: 1 in
// about 40,000 objects that a consumer thread freed at once kept their size class. A class not
// seen before takes locks to name: `unknown` says so, for name_for_its_thread after.
struct hl_naming {
  const struct hl_buffer *b;
  int unknown;
};
HL_HOOK static void name_for_its_busy_thread(const struct hl_block *blk, void *context) {
  struct hl_naming *naming = context;
  if (blk->category || blk->size < 16 || blk->serial == naming->b->serial) return;
  uint64_t words[2];
  uint32_t cat;
  memcpy(words, (const void *)(uintptr_t)blk->addr, sizeof words);
  if (!hl_swift_classify_known(words, &cat)) naming->unknown = 1;
  else if (cat) hl_name_late(blk->serial, hl_late_key(blk->serial, blk->counter) << 16 | cat);
}

// `header` says whether the block's first words are still the program's, to name it by.
HL_HOOK static void hl_record_free(struct hl_buffer *b, uint64_t addr, uint64_t now, int header) {
  struct hl_block blk;
  struct hl_naming naming = {b, 0};
  int names = hl_swift_present && header;
  if (!hl_live_remove_then(addr, &blk, names ? name_for_its_busy_thread : NULL, &naming)) return;
  if (naming.unknown) name_for_its_thread(&blk);
  hl_emit_free(b, now, &blk);
}

// The frees kept in their blocks (past a full queue), taken whole and written oldest first.
// The thread's own allocation still waiting to be written goes out unnamed when it is one of
// them: its header is gone.
HL_HOOK static struct hl_freed *take_freed(struct hl_buffer *b, int on) {
  struct hl_freed *list = __atomic_exchange_n(&hl_tls.freed, NULL, __ATOMIC_ACQUIRE);
  struct hl_freed *oldest = NULL;
  while (list) {
    struct hl_freed *next = list->next;
    list->next = oldest;
    oldest = list;
    list = next;
  }
  for (struct hl_freed *f = oldest; on && f; f = f->next) {
    if (b->pending.valid && b->pending.addr == (uint64_t)(uintptr_t)f) {
      hl_emit_alloc_pending(b);
      b->pending.valid = 0;
    }
    hl_finish_pending(b);
    hl_record_free(b, (uint64_t)(uintptr_t)f, f->time, 0);
  }
  return oldest;
}

// Writes the calls that signal handlers made during this event, in the queue and past it, and
// then gives their frees back to glibc. The program's signals wait meanwhile:
// - Under a storm of signals, each handler let in here deferred more calls for this same drain
//   to write: the work grew with the time it took, and the thread never left the event.
// - glibc's free takes the arena's lock, and a handler that allocates (unsafe, but common)
//   landing during it would wait for that lock forever. Untraced, a program runs that risk
//   only inside its own calls to the allocator, not inside one the shim makes for it later.
// A leak scan's stop signal still comes in while the calls are written (the scan holds the
// live table, which writing them may wait for), and a program's own signal of that number,
// passed on to its handler, defers calls for the next event: the queue's end is read once.
// Once recording has stopped, only the frees are done: the program's memory is still its own.
// Called when hl_deferred_waiting says there is something to write.
HL_HOOK void hl_drain(struct hl_buffer *b) {
  sigset_t old;
  hl_block_signals(0, &old);
  int on = b && atomic_load_explicit(&hl_state, memory_order_relaxed) == HL_ON;
  uint32_t head = atomic_load_explicit(&hl_tls.deferred_head, memory_order_relaxed);
  uint32_t end = atomic_load_explicit(&hl_tls.deferred_tail, memory_order_acquire), frees = 0;
  void *queued[HL_DEFERRED];
  for (; head != end; atomic_store_explicit(&hl_tls.deferred_head, ++head, memory_order_release)) {
    struct hl_deferred *d = &hl_tls.deferred[head % HL_DEFERRED];  // mapped: it holds calls
    if (on) {
      hl_finish_pending(b);
      if (d->kind == 1)
        hl_record_alloc(b, d->addr, d->size, d->time, hl_intern_pcs(b, d->pcs, d->depth),
                        d->scope);
      else
        hl_record_free(b, d->addr, d->time, 1);
    }
    if (d->kind == 2) queued[frees++] = (void *)(uintptr_t)d->addr;
  }
  struct hl_freed *kept = take_freed(b, on);
  hl_block_signals(1, NULL);
  for (uint32_t i = 0; i < frees; i++) __libc_free(queued[i]);
  while (kept) {
    struct hl_freed *f = kept;
    kept = f->next;
    __libc_free(f);
  }
  pthread_sigmask(SIG_SETMASK, &old, NULL);
}

// An event: the guard keeps the shim's own calls out, and a signal handler's call meanwhile is
// deferred; hl_release writes what handlers deferred. Calls deferred since the thread's last
// event are written first, so the buffer stays in time order.
// errno is the program's: what the shim calls (libunwind reads a non-blocking pipe, which sets
// EAGAIN) must not change it.
#define HL_EVENT(body)                                     \
  do {                                                     \
    int saved_errno = errno;                               \
    hl_enter();                                            \
    struct hl_buffer *b = hl_acquire();                    \
    if (b) {                                               \
      if (HL_UNLIKELY(hl_deferred_waiting())) hl_drain(b); \
      body;                                                \
      hl_release(b);                                       \
    }                                                      \
    hl_leave();                                            \
    errno = saved_errno;                                   \
  } while (0)

HL_HOOK void hl_on_alloc(void *ptr, size_t size, const struct hl_entry *at) {
  HL_EVENT({
    hl_live_prefetch((uint64_t)(uintptr_t)ptr);
    hl_finish_pending(b);
    uint32_t stack = hl_capture_stack(b, at);
    hl_record_alloc(b, (uint64_t)(uintptr_t)ptr, size, hl_now(), stack, hl_tls.scope);
  });
}

HL_HOOK void hl_on_free(void *ptr) {
  HL_EVENT({
    hl_live_prefetch((uint64_t)(uintptr_t)ptr);
    hl_finish_pending(b);
    hl_record_free(b, (uint64_t)(uintptr_t)ptr, hl_now(), 1);
  });
}

HL_HOOK void hl_on_realloc(const struct hl_block *old, int had_old, void *ptr, size_t size,
                           const struct hl_entry *at) {
  HL_EVENT({
    hl_finish_pending(b);
    uint64_t now = hl_now();
    if (had_old) hl_emit_free(b, now, old);
    uint32_t stack = hl_capture_stack(b, at);
    hl_record_alloc(b, (uint64_t)(uintptr_t)ptr, size, now, stack, hl_tls.scope);
  });
}

// Sampling mode (sampling.c): a sampled allocation, and the counts that include it, as they
// stand now, written just after its ALLOC (hl_emit_alloc_pending). Written before it, they made
// the peak that a reader takes from them come before the block: a block of 5 MB that made the
// peak was missing from its stack's bytes at the peak.
HL_HOOK void hl_sample_record_alloc(void *ptr, size_t size) {
  HL_EVENT({
    hl_live_prefetch((uint64_t)(uintptr_t)ptr);
    hl_finish_pending(b);
    uint64_t now = hl_now();
    // A buffer that threads share, or one taken past the thread's exit destructor, outlives
    // the thread's counts, which are in its TLS: there they go first, as they stand.
    if (b->many || hl_tls.exiting) hl_counts_emit(b, &hl_tls.counts, now);
    else hl_counts_hold(b, &hl_tls.counts);
    uint32_t stack = hl_capture_stack(b, NULL);
    hl_record_alloc(b, (uint64_t)(uintptr_t)ptr, size, now, stack, hl_tls.scope);
  });
}

// Sampling mode: takes a block out of the live table; returns whether it was there. With
// `emit` its FREE is written now; otherwise `out` gets the block, for hl_sample_emit_free.
HL_HOOK int hl_sample_record_free(void *ptr, int emit, struct hl_block *out) {
  int had = 0;
  HL_EVENT({
    struct hl_block blk;
    hl_finish_pending(b);  // first: the block freed may be it, named from its header while whole
    had = hl_live_remove((uint64_t)(uintptr_t)ptr, &blk);
    if (had && emit) hl_emit_free(b, hl_now(), &blk);
    if (had && out) *out = blk;
  });
  return had;
}

HL_HOOK void hl_sample_emit_free(const struct hl_block *blk) {
  HL_EVENT({
    hl_finish_pending(b);
    hl_emit_free(b, hl_now(), blk);
  });
}

// The thread's queue, mapped by the first handler that needs it. A handler that lands while
// another maps it runs to its end first: whichever maps second gives its mapping back.
HL_HOOK static struct hl_deferred *defer_queue(void) {
  struct hl_deferred *queue = __atomic_load_n(&hl_tls.deferred, __ATOMIC_ACQUIRE), *none = NULL;
  if (HL_LIKELY(queue) || hl_tls.exiting) return queue;  // none made after its thread's end
  size_t bytes = HL_DEFERRED * sizeof *queue;
  if (!(queue = hl_map(bytes))) return NULL;
  if (__atomic_compare_exchange_n(&hl_tls.deferred, &none, queue, 0, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    return queue;
  hl_unmap(queue, bytes);
  return none;
}

// From a signal handler inside an event (hooks.c). Returns 0 when the queue is full: an
// allocation then goes unrecorded, and is counted.
HL_HOOK static int hl_defer(int kind, uint64_t addr, uint64_t size) {
  struct hl_deferred *queue = defer_queue();
  uint32_t tail = atomic_load_explicit(&hl_tls.deferred_tail, memory_order_relaxed);
  if (!queue ||
      tail - atomic_load_explicit(&hl_tls.deferred_head, memory_order_acquire) >= HL_DEFERRED) {
    if (kind == 1) hl_lost(HL_LOST_SIGNAL);  // a free goes into its block (hl_defer_free)
    return 0;
  }
  // A nested handler (another signal) runs to its end before this one goes on, so the slot
  // is claimed first and published last.
  atomic_store_explicit(&hl_tls.deferred_tail, tail + 1, memory_order_relaxed);
  struct hl_deferred *d = &queue[tail % HL_DEFERRED];
  d->kind = 0;
  d->addr = addr;
  d->size = size;
  d->time = hl_now();
  d->scope = hl_tls.scope;
  // The interrupted event may be inside libunwind, which must not be entered again, or may not
  // have made the scratch libunwind works in yet: then the stack is the handler's caller alone.
  struct hl_unwind_scratch *w = hl_tls.buf ? hl_unwind_scratch_made(hl_tls.buf) : NULL;
  if (hl_tls.unwinding || !w) {
    d->pcs[0] = __builtin_return_address(0);
    d->depth = 1;
  } else {
    int saved_errno = errno;
    int n = hl_libunwind_steps(w, d->pcs, HL_DEFERRED_DEPTH);
    errno = saved_errno;
    d->depth = (uint32_t)(n > 0 ? n : 0);
  }
  __atomic_store_n(&d->kind, (uint32_t)kind, __ATOMIC_RELEASE);
  return 1;
}

HL_HOOK void hl_defer_alloc(void *ptr, size_t size) {
  hl_defer(1, (uint64_t)(uintptr_t)ptr, size);
}

// Always takes the free: past a full queue, into the block's own first words.
HL_HOOK int hl_defer_free(void *ptr) {
  if (hl_defer(2, (uint64_t)(uintptr_t)ptr, 0)) return 1;
  struct hl_freed *f = ptr, *head = __atomic_load_n(&hl_tls.freed, __ATOMIC_RELAXED);
  f->time = hl_now();
  do f->next = head;  // a nested handler's push, which runs to its end first, makes this fail
  while (!__atomic_compare_exchange_n(&hl_tls.freed, &head, f, 1, __ATOMIC_RELEASE,
                                      __ATOMIC_RELAXED));
  return 1;
}
