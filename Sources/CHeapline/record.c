// Encoding records into a thread's buffer (TraceFormat.md), and turning a full buffer into a
// chunk. The caller owns the buffer (BUSY or FLUSHING). Each emit encodes at `pos` and commits
// the record at its end (hl_commit_record), so `len` only ever covers whole records.
#include <string.h>

#include "internal.h"

void hl_buffer_reset(struct hl_buffer *b, uint32_t serial, uint32_t tid) {
  b->serial = serial;
  b->tid = tid;
  b->len = b->pos = b->records = b->allocs = b->frees = 0;
  b->first_alloc = b->emit_next = 0;
  b->has_time = 0;
  b->base_time = b->last_time = 0;
  b->next_alloc = 0;
  b->last_addr = 0;
  b->last_freed = 0;
  atomic_store(&b->inflight, 0);
  b->pending.valid = 0;
  b->cache_depth = 0;
  b->counts = NULL;
  memset(b->nodes, 0, sizeof b->nodes);  // ids belong to the trace they were made for
}

void hl_buffer_flush(struct hl_buffer *b) {
  if (b->len == 0) return;
  hl_writer_chunk(HL_CHUNK_EVENTS, b, b->has_time ? b->base_time : b->last_time, b->data, b->len);
  // The chunk is in the file (or the recording has failed): start the next one.
  b->records = b->allocs = b->frees = 0;
  b->has_time = 0;
  b->last_addr = 0;
  b->first_alloc = b->last_freed = b->emit_next;
  __atomic_store_n(&b->len, 0, __ATOMIC_RELEASE);
  b->pos = 0;
  atomic_store(&b->inflight, 0);
}

HL_HOOK void hl_ensure(struct hl_buffer *b, uint32_t bytes) {
  if (HL_UNLIKELY(b->pos + bytes > HL_BUFFER_BYTES)) hl_buffer_flush(b);
}

HL_HOOK void hl_put_u8(struct hl_buffer *b, uint8_t v) { b->data[b->pos++] = v; }

HL_HOOK void hl_put_varint(struct hl_buffer *b, uint64_t v) {
  uint8_t *out = b->data + b->pos;
  while (v >= 0x80) {
    *out++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *out++ = (uint8_t)v;
  b->pos = (uint32_t)(out - b->data);
}

void hl_put_bytes(struct hl_buffer *b, const void *p, uint32_t n) {
  memcpy(b->data + b->pos, p, n);
  b->pos += n;
}

// The delta from the previous timed record; the first timed record of a chunk sets its base.
HL_HOOK void hl_put_time(struct hl_buffer *b, uint64_t t) {
  if (!b->has_time) {
    b->base_time = b->last_time = t;
    b->has_time = 1;
  }
  if (t < b->last_time) t = b->last_time;  // never backwards within a thread
  hl_put_varint(b, t - b->last_time);
  b->last_time = t;
}

// ALLOC and FREE times are kept to 1,024 ns: the nanoseconds below are the clock's noise, yet
// they were half of a trace's compressed bytes. Still in nanoseconds, so readers need nothing
// new; a FREE names its allocation, so the order that 1 µs leaves open between threads never
// mismatches a pair. Marks and samples keep their exact instants.
static inline uint64_t event_time(uint64_t t) { return t & ~(uint64_t)(HL_TIME_GRAIN - 1); }

HL_HOOK void hl_emit_alloc_pending(struct hl_buffer *b) {
  const struct hl_pending *p = &b->pending;
  hl_ensure(b, 1 + 5 * 10);
  hl_put_u8(b, HL_TAG_ALLOC);
  hl_put_time(b, event_time(p->time));
  hl_put_varint(b, p->size);
  hl_put_varint(b, p->stack);
  hl_put_varint(b, p->category ? p->category : hl_size_class(p->size));
  int64_t delta = (int64_t)(p->addr - b->last_addr);
  hl_put_varint(b, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
  b->last_addr = p->addr;
  b->allocs++;
  b->emit_next = p->counter + 1;  // ALLOCs leave a buffer in counter order, without gaps
  hl_commit_record(b);
}

HL_HOOK void hl_emit_free(struct hl_buffer *b, uint64_t time, uint32_t serial, uint64_t counter) {
  hl_ensure(b, 1 + 3 * 10);
  if (serial == b->serial && counter < b->emit_next) {
    // A block of this thread's: its counter less the previous such free's. A program frees
    // the blocks of a structure in about the order it made them, so this is a small number
    // that repeats, where their ages are not: it took a sixth of the frees' bytes at most.
    hl_put_u8(b, HL_TAG_FREE_NEAR);
    hl_put_time(b, event_time(time));
    int64_t delta = (int64_t)(counter - b->last_freed);
    hl_put_varint(b, ((uint64_t)delta << 1) ^ (uint64_t)(delta >> 63));
    b->last_freed = counter;
  } else {
    hl_put_u8(b, HL_TAG_FREE);
    hl_put_time(b, event_time(time));
    hl_put_varint(b, serial);
    hl_put_varint(b, counter);
  }
  b->frees++;
  hl_commit_record(b);
}

HL_HOOK void hl_emit_stack(struct hl_buffer *b, uint32_t id, uint32_t parent, uintptr_t pc) {
  hl_ensure(b, 1 + 3 * 10);
  hl_put_u8(b, HL_TAG_STACK);
  hl_put_varint(b, id);
  hl_put_varint(b, parent);
  hl_put_varint(b, pc);
  hl_commit_record(b);
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

void hl_emit_rss(struct hl_buffer *b, uint64_t time, uint64_t bytes) {
  hl_ensure(b, 1 + 2 * 10);
  hl_put_u8(b, HL_TAG_RSS);
  hl_put_time(b, time);
  hl_put_varint(b, bytes);
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
