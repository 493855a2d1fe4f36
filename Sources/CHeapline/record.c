// Encoding records into a thread's buffer (TraceFormat.md), and turning a full buffer into a
// chunk. The caller owns the buffer (BUSY or FLUSHING). Each emit encodes at `pos` and commits
// the record at its end (hl_commit_record), so `len` only ever covers whole records.
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

// How much of its data a buffer fills before it is written out. Each thread has a buffer of its
// own, and a busy thread's fills and stays in memory: with a thousand such threads, 2 GiB. So the
// buffers share HL_DATA_BUDGET once there are more than 16, and a chunk of a thread among many
// is smaller (its records compress a little less well); at least HL_DATA_FLOOR, which holds the
// largest record many times over. The limit is one for all, so that a thread that started
// among few sees it fall as others start, and writes out at its next record.
enum { HL_DATA_BUDGET = 32 << 20, HL_DATA_FLOOR = 32 << 10 };
static _Atomic uint32_t hl_data_limit = HL_BUFFER_BYTES;

// Two threads that make buffers at once may come here out of order: a count of 0 (a forked
// child's, which starts anew) sets the limit, any other only lowers it.
void hl_buffers_now(uint32_t made) {
  uint64_t share = HL_DATA_BUDGET / (made ? made : 1);
  uint32_t limit = share >= HL_BUFFER_BYTES ? HL_BUFFER_BYTES
                   : share < HL_DATA_FLOOR  ? HL_DATA_FLOOR
                                            : (uint32_t)share & ~4095u;
  uint32_t now = atomic_load_explicit(&hl_data_limit, memory_order_relaxed);
  if (!made) atomic_store_explicit(&hl_data_limit, limit, memory_order_relaxed);
  else
    while (limit < now && !atomic_compare_exchange_weak_explicit(
                              &hl_data_limit, &now, limit, memory_order_relaxed,
                              memory_order_relaxed)) {
    }
}

static inline uint32_t data_limit(void) {
  return atomic_load_explicit(&hl_data_limit, memory_order_relaxed);
}

// Gives back the pages of data past the limit that earlier chunks filled, when threads were
// fewer. A buffer in the recorder's memory file is a shared mapping, whose pages only
// MADV_REMOVE frees; a private one takes MADV_DONTNEED.
static void fit_to_limit(struct hl_buffer *b) {
  uint32_t limit = data_limit();
  if (b->reach <= limit) return;
  uintptr_t from = ((uintptr_t)b->data + limit + 4095) & ~(uintptr_t)4095;
  uintptr_t to = ((uintptr_t)b->data + b->reach + 4095) & ~(uintptr_t)4095;
  if (to > from && madvise((void *)from, to - from, MADV_REMOVE) != 0)
    madvise((void *)from, to - from, MADV_DONTNEED);
  b->reach = limit;
}

// The state a chunk's records are decoded with starts anew with every chunk.
static void start_chunk(struct hl_buffer *b) {
  b->records = b->allocs = b->frees = 0;
  b->events = b->tick_at = b->stack_records = 0;
  b->has_time = 0;
  b->first_alloc = b->last_here = b->last_far = b->emit_next;
  b->last_info = b->last_info_stack = b->last_stack_id = b->last_pc_index = b->last_pc = 0;
  hl_model_reset(&b->model);
  __atomic_store_n(&b->side_len, 0, __ATOMIC_RELEASE);
  __atomic_store_n(&b->len, 0, __ATOMIC_RELEASE);
  b->side_pos = b->pos = 0;
}

// Infos are defined once per buffer and trace, in the buffer's own records, so that a reader
// knows each before the first ALLOC that names it however the threads' chunks interleave.
enum { HL_INFO_BITMAP_BYTES = (1 << 20) / 8 };  // infos.c's bound, HL_INFO_MAX

void hl_buffer_forget_infos(struct hl_buffer *b) {
  if (b->defined) memset(b->defined, 0, (size_t)b->defined_words * sizeof *b->defined);
  b->defined_words = 0;
}

void hl_buffer_reset(struct hl_buffer *b, uint32_t serial, uint32_t tid, uint32_t recording) {
  b->serial = serial;
  b->tid = tid;
  b->emit_next = b->next_alloc = 0;
  b->last_time = 0;
  b->checked_at = 0;
  start_chunk(b);
  fit_to_limit(b);
  atomic_store(&b->inflight, 0);
  atomic_store(&b->named_late, 0);
  b->pending.valid = 0;
  b->held_from = NULL;
  b->cache_depth = b->cache_unwound = 0;
  b->counts = NULL;
  // Stack ids hold for the whole recording they were made in: a thread that takes over an exited
  // thread's buffer keeps its caches of them (clearing their 120 KiB for each new thread was
  // most of what the shim took from a program that starts threads by the thousand).
  // A new buffer's (recording 0) are zero already: writing them would fault in its 64 KiB, most
  // of what a thread that allocates now and then cost (a program of 1,000 threads, 84 MiB).
  if (b->recording != recording) {
    if (b->recording) memset(b->nodes, 0, sizeof b->nodes);
    hl_unwind_forget_stacks(b);
    b->recording = recording;
  }
  // Without the bitmap every ALLOC defines its info again: bigger, never wrong.
  if (!b->defined) b->defined = hl_map(HL_INFO_BITMAP_BYTES);
  hl_buffer_forget_infos(b);
}

void hl_buffer_flush(struct hl_buffer *b) {
  if (b->len == 0 && b->side_len == 0) return;
  int held = hl_cancel_hold();  // the write is a cancellation point, under the file's lock
  hl_writer_chunk(b, b->has_time ? b->base_time : b->last_time);
  hl_cancel_release(held);
  // The chunk is in the file (or the recording has failed): start the next one.
  if (b->pos > b->reach) b->reach = b->pos;
  start_chunk(b);
  fit_to_limit(b);
  // A chunk that the trace lost (its write failed, or the recording had failed before) leaves
  // the records after it naming its INFOs and counting on its ALLOCs: marked as written before
  // the file's start, so that `record` never adds them (every command called such a trace
  // corrupt). What other buffers hold is whole, and is added.
  atomic_store(&b->inflight, hl_writer_failed() ? 1 : 0);
}

HL_HOOK void hl_ensure(struct hl_buffer *b, uint32_t bytes) {
  if (HL_UNLIKELY(b->pos + bytes > data_limit())) hl_buffer_flush(b);
}

// Room for `bytes` of event records and `side` of side records, in one chunk.
HL_HOOK static void ensure_both(struct hl_buffer *b, uint32_t bytes, uint32_t side) {
  if (HL_UNLIKELY(b->pos + bytes > data_limit() || b->side_pos + side > HL_SIDE_BYTES))
    hl_buffer_flush(b);
}

HL_HOOK void hl_put_u8(struct hl_buffer *b, uint8_t v) { b->data[b->pos++] = v; }

HL_HOOK void hl_put_varint(struct hl_buffer *b, uint64_t v) {
  b->pos += hl_encode_varint(b->data + b->pos, v);
}

HL_HOOK static void put_svarint(struct hl_buffer *b, int64_t v) { hl_put_varint(b, hl_zigzag(v)); }

void hl_put_bytes(struct hl_buffer *b, const void *p, uint32_t n) {
  memcpy(b->data + b->pos, p, n);
  b->pos += n;
}

HL_HOOK void hl_side_ensure(struct hl_buffer *b, uint32_t bytes) { ensure_both(b, 0, bytes); }
HL_HOOK void hl_side_u8(struct hl_buffer *b, uint8_t v) { b->side[b->side_pos++] = v; }
HL_HOOK void hl_side_varint(struct hl_buffer *b, uint64_t v) {
  b->side_pos += hl_encode_varint(b->side + b->side_pos, v);
}
void hl_side_bytes(struct hl_buffer *b, const void *p, uint32_t n) {
  memcpy(b->side + b->side_pos, p, n);
  b->side_pos += n;
}
HL_HOOK static void side_svarint(struct hl_buffer *b, int64_t v) {
  hl_side_varint(b, hl_zigzag(v));
}
HL_HOOK void hl_side_commit(struct hl_buffer *b) {
  b->records++;
  __atomic_store_n(&b->side_len, b->side_pos, __ATOMIC_RELEASE);
}
#define side_u8 hl_side_u8
#define side_varint hl_side_varint
#define side_commit hl_side_commit

// The delta from the previous timed record; the first timed record of a chunk sets its base.
// Never backwards within a buffer, across its chunks too: a reader takes a buffer's chunks in
// the order of their counters and base times, and a COUNTS record that a thread past its exit
// timed before it waited for a shared buffer, first in the next chunk, made that chunk's base
// earlier than the last one's (a trace that no command could read).
HL_HOOK void hl_put_time(struct hl_buffer *b, uint64_t t) {
  if (t < b->last_time) t = b->last_time;
  if (!b->has_time) {
    b->base_time = b->last_time = t;
    b->has_time = 1;
  }
  hl_put_varint(b, t - b->last_time);
  b->last_time = t;
}

// Whether other threads allocate too. While a thread allocates it looks once a millisecond at
// the marks the others left in a table (their serial and millisecond), then leaves its own;
// finding one from within two milliseconds, it makes every thread stamp every grain for the next
// eight, through one word that each event reads and that changes about once a millisecond at
// most. Alone, a thread needs no finer time than the millisecond a timeline shows. When each
// thread's own look decided its stamps, a thread that had allocated alone went on stamping to the
// millisecond for up to a millisecond after another came back: its allocations, up to a
// millisecond early, were merged before the other thread's frees that made room for them, and a
// queue of 8 blocks peaked at 200.
enum { HL_MARK_MS_BITS = 40, HL_MARKS = 64 };
static _Atomic uint64_t hl_marks[HL_MARKS];
static _Atomic uint64_t hl_crowded_until;

// Every thread stamps every grain for the next eight milliseconds from `now`; returns their end.
// The word is written once a millisecond at most, as every event reads it.
HL_HOOK static uint64_t crowd(uint64_t now) {
  uint64_t until = now + 8 * (uint64_t)HL_COARSE_TICK;
  if (atomic_load_explicit(&hl_crowded_until, memory_order_relaxed) + HL_COARSE_TICK < until)
    atomic_store_explicit(&hl_crowded_until, until, memory_order_relaxed);
  return until;
}

HL_HOOK static void look_around(struct hl_buffer *b, uint64_t now) {
  b->checked_at = now;
  uint64_t mask = (1ull << HL_MARK_MS_BITS) - 1, ms = (now >> 20) & mask;
  for (int i = 0; i < HL_MARKS; i++) {  // before its own mark, which may share a slot
    uint64_t other = atomic_load_explicit(&hl_marks[i], memory_order_relaxed);
    int64_t apart = (int64_t)ms - (int64_t)(other & mask);
    if (!other || other >> HL_MARK_MS_BITS == b->serial || apart > 2 || apart < -2) continue;
    crowd(now);
    break;
  }
  atomic_store_explicit(&hl_marks[b->serial % HL_MARKS],
                        (uint64_t)b->serial << HL_MARK_MS_BITS | ms, memory_order_relaxed);
}

// TICK: the time moves on to `now` before the next event record.
HL_HOOK static void tick(struct hl_buffer *b, uint64_t now) {
  if (now - b->checked_at >= HL_COARSE_TICK) look_around(b, now);
  side_u8(b, HL_TAG_TICK);
  side_varint(b, b->events - b->tick_at);
  side_varint(b, now - b->last_time);
  side_commit(b);
  b->tick_at = b->events;
  b->last_time = now;
}

// An allocation's or a free's time, in grains: the thread's latest TICK's, which is written
// when the time has moved on by a millisecond, or by a grain while other threads allocate too
// or when `exact` (a free of another thread's block: it must not seem to come before that
// block's ALLOC). The caller made room for a TICK.
HL_HOOK static void event_time(struct hl_buffer *b, uint64_t now, int exact) {
  now &= ~(uint64_t)(HL_TIME_GRAIN - 1);
  if (HL_UNLIKELY(!b->has_time)) {
    if (now < b->last_time) now = b->last_time;  // as hl_put_time, across chunks
    b->base_time = b->last_time = now;
    b->has_time = 1;
    look_around(b, now);
    return;
  }
  uint64_t crowded = atomic_load_explicit(&hl_crowded_until, memory_order_relaxed);
  // A free of another thread's block says that another thread allocates, whatever the marks
  // say: under a loaded machine, two threads each descheduled for more than 2 ms between their
  // looks found the other's mark stale, and the thread that reused the block stamped it up to a
  // millisecond before the free (a queue of 8 blocks peaked at 244 on a machine with 3 busy
  // loops beside it). The program's own ordering of the free before the reuse makes the store
  // seen before the reusing thread's stamp.
  if (exact && now >= crowded) crowded = crowd(now);
  if (now <= b->last_time) return;
  if (now - b->last_time < HL_COARSE_TICK && !exact && now >= crowded) return;
  tick(b, now);
}

// INFO, in this buffer's records the first time it names `info`.
HL_HOOK static void define_info(struct hl_buffer *b, uint32_t info, const struct hl_pending *p) {
  uint64_t *bits = b->defined;
  if (bits) {
    uint32_t word = info >> 6;
    uint64_t bit = 1ull << (info & 63);
    if (bits[word] & bit) return;
    bits[word] |= bit;
    if (word >= b->defined_words) b->defined_words = word + 1;
  }
  side_u8(b, HL_TAG_INFO);
  side_svarint(b, (int64_t)info - (int64_t)b->last_info - 1);
  side_varint(b, p->size);
  side_svarint(b, (int64_t)p->stack - (int64_t)b->last_info_stack);
  side_varint(b, p->category ? p->category : hl_size_class(p->size));
  side_commit(b);
  b->last_info = info;
  b->last_info_stack = p->stack;
}

HL_HOOK void hl_emit_alloc_pending(struct hl_buffer *b) {
  const struct hl_pending *p = &b->pending;
  ensure_both(b, 1 + 4 * 10, 1 + 2 * 10 + 1 + 4 * 10);
  event_time(b, p->time, 0);
  uint64_t carve = 0;
  if (HL_LIKELY(p->info)) {
    define_info(b, p->info, p);
    unsigned code = hl_model_code(&b->model, p->addr, p->size, &carve);
    hl_put_u8(b, (uint8_t)(HL_TAG_ALLOC | code));
    hl_put_varint(b, p->info);
    if (code == HL_ADDR_ESCAPE) put_svarint(b, (int64_t)(p->addr - carve));
  } else {  // no info could be made: every field spelled out
    hl_model_code(&b->model, p->addr, p->size, &carve);
    hl_put_u8(b, HL_TAG_ALLOC_EXPLICIT);
    hl_put_varint(b, p->size);
    hl_put_varint(b, p->stack);
    hl_put_varint(b, p->category ? p->category : hl_size_class(p->size));
    hl_put_varint(b, p->addr);
  }
  b->allocs++;
  b->emit_next = p->counter + 1;  // ALLOCs leave a buffer in counter order, without gaps
  hl_commit_record(b);
  if (HL_UNLIKELY(b->held_from)) hl_counts_emit_held(b, p->time);
}

// A free names its block's alloc counter: as the delta from the chunk's previous free of the
// same kind when the block is this thread's (a program frees the blocks of a structure in about
// the order it made them, so the delta is small and repeats), else with the thread's serial.
// A block allocated in this chunk is freed into the address model, where the next allocation
// of its size will likely find it.
HL_HOOK void hl_emit_free(struct hl_buffer *b, uint64_t time, const struct hl_block *blk) {
  ensure_both(b, 1 + 2 * 10, 1 + 2 * 10);
  int own = blk->serial == b->serial && blk->counter < b->emit_next;
  event_time(b, time, !own);
  if (own && blk->counter >= b->first_alloc) {
    hl_put_u8(b, HL_TAG_FREE_HERE);
    put_svarint(b, (int64_t)(blk->counter - b->last_here));
    b->last_here = blk->counter;
    hl_model_freed(&b->model, blk->addr, blk->size);
  } else if (own) {
    hl_put_u8(b, HL_TAG_FREE_FAR);
    put_svarint(b, (int64_t)(blk->counter - b->last_far));
    b->last_far = blk->counter;
  } else {
    hl_put_u8(b, HL_TAG_FREE_OTHER);
    hl_put_varint(b, blk->serial);
    hl_put_varint(b, blk->counter);
  }
  b->frees++;
  hl_commit_record(b);
}

// PC: a return address, numbered once for the whole trace; STACK nodes name it by number.
HL_HOOK void hl_emit_pc(struct hl_buffer *b, uint32_t index, uintptr_t pc) {
  ensure_both(b, 0, 1 + 2 * 10);
  side_u8(b, HL_TAG_PC);
  side_svarint(b, (int64_t)index - (int64_t)b->last_pc_index - 1);
  side_svarint(b, (int64_t)(pc - b->last_pc));
  b->stack_records++;
  side_commit(b);
  b->last_pc_index = index;
  b->last_pc = pc;
}

HL_HOOK void hl_emit_stack(struct hl_buffer *b, uint32_t id, uint32_t parent, uint32_t pc_index) {
  ensure_both(b, 0, 1 + 3 * 10);
  side_u8(b, HL_TAG_STACK);
  side_svarint(b, (int64_t)id - (int64_t)b->last_stack_id - 1);
  side_varint(b, id - parent);
  side_varint(b, pc_index);
  b->stack_records++;
  side_commit(b);
  b->last_stack_id = id;
}

// The tail that CATEGORY and MARK share: u8 kind, then the name with its length.
static void put_kind_and_name(struct hl_buffer *b, int kind, const char *name, size_t len) {
  hl_put_u8(b, (uint8_t)kind);
  hl_put_varint(b, len);
  hl_put_bytes(b, name, (uint32_t)len);
  hl_commit_record(b);
}

void hl_emit_category(struct hl_buffer *b, uint32_t id, int kind, const char *name, size_t len) {
  if (len > 1024) len = 1024;
  hl_ensure(b, (uint32_t)(1 + 10 + 1 + 10 + len));
  hl_put_u8(b, HL_TAG_CATEGORY);
  hl_put_varint(b, id);
  put_kind_and_name(b, kind, name, len);
}

// RSS, or RSS_PEAK when `peak`: the high-water mark that the RSS reached since the last sample.
void hl_emit_rss(struct hl_buffer *b, uint64_t time, uint64_t bytes, uint64_t peak) {
  hl_ensure(b, 1 + 3 * 10);
  hl_put_u8(b, peak ? HL_TAG_RSS_PEAK : HL_TAG_RSS);
  hl_put_time(b, time);
  hl_put_varint(b, bytes);
  if (peak) hl_put_varint(b, peak);
  hl_commit_record(b);
}

void hl_emit_mark(struct hl_buffer *b, uint64_t time, int kind, const char *name, size_t len) {
  if (len > 1024) len = 1024;
  hl_ensure(b, (uint32_t)(1 + 10 + 1 + 10 + len));
  hl_put_u8(b, HL_TAG_MARK);
  hl_put_time(b, time);
  put_kind_and_name(b, kind, name, len);
}

// SAMPLING: at time 0, before any allocation, the mean bytes between samples.
void hl_emit_sampling(struct hl_buffer *b, uint64_t bytes) {
  hl_ensure(b, 1 + 2 * 10);
  hl_put_u8(b, HL_TAG_SAMPLING);
  hl_put_time(b, 0);
  hl_put_varint(b, bytes);
  hl_commit_record(b);
}

void hl_emit_lost(struct hl_buffer *b, uint64_t time, int reason, uint64_t count) {
  hl_ensure(b, 1 + 10 + 1 + 10);
  hl_put_u8(b, HL_TAG_LOST);
  hl_put_time(b, time);
  hl_put_u8(b, (uint8_t)reason);
  hl_put_varint(b, count);
  hl_commit_record(b);
}
