// Declarations shared by the shim's files. Nothing here is public API: see heapline.h.
#ifndef HEAPLINE_INTERNAL_H
#define HEAPLINE_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "model.h"

#define HL_LIKELY(x) __builtin_expect(!!(x), 1)
#define HL_UNLIKELY(x) __builtin_expect(!!(x), 0)
// Code that runs between a hook's entry and the unwinder lives in its own section, so the
// frames it leaves on the stack can be told apart from the caller's and dropped.
#define HL_HOOK __attribute__((section("hl_text")))

// LEB128, as every varint of the trace (TraceFormat.md): writes `v` at `out`, returns its bytes.
HL_HOOK static inline uint32_t hl_encode_varint(uint8_t *out, uint64_t v) {
  uint8_t *start = out;
  while (v >= 0x80) {
    *out++ = (uint8_t)(v | 0x80);
    v >>= 7;
  }
  *out++ = (uint8_t)v;
  return (uint32_t)(out - start);
}
// A signed value as an unsigned varint keeps it short: 0, -1, 1, -2… become 0, 1, 2, 3…
static inline uint64_t hl_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }

// A buffer's two sections (TraceFormat.md, "Payload"): events, and the side section of what
// the events need defined first (allocation infos, stack nodes, times). A chunk goes out when
// either is full, or when a flush takes it.
enum { HL_DEFAULT_DEPTH = 64, HL_MAX_DEPTH = 256, HL_BUFFER_BYTES = 2 * 1024 * 1024,
       HL_SIDE_BYTES = 64 * 1024, HL_NODE_CACHE = 4096, HL_INFO_CACHE_BITS = 10 };
// Event times: 1,024 ns grains. A thread that is alone in allocating stamps its events with the
// time of its last TICK, written whenever a millisecond (975 grains: with the grain's own
// rounding, under 1 ms) has passed; while other threads allocate too, every grain (record.c).
enum { HL_TIME_GRAIN = 1024, HL_COARSE_TICK = 975 * HL_TIME_GRAIN };

// glibc's chunk header, the word before a block in use (malloc.c): its size, with bit 1 set
// for a chunk that is a mapping of its own. What malloc_usable_size answers, without the call
// and its look at the next chunk's header, a cache line of its own.
static inline uint64_t hl_chunk_header(const void *p) { return ((const uint64_t *)p)[-1]; }
static inline int hl_chunk_is_mapped(uint64_t header) { return (header & 2) != 0; }
static inline uint64_t hl_usable_from_header(uint64_t header) {
  return (header & ~(uint64_t)7) - (hl_chunk_is_mapped(header) ? 16 : 8);
}
static inline uint64_t hl_usable_size(const void *p) {
  return hl_usable_from_header(hl_chunk_header(p));
}

// Recording state of the process, read by every hook.
enum hl_state { HL_UNINIT = 0, HL_OFF = 1, HL_ON = 2, HL_STOPPING = 3 };
extern _Atomic int hl_state;
extern unsigned hl_depth;

// Trace record tags and chunk kinds (TraceFormat.md). Format 5 writes allocations and frees
// with tags of their own; 1, 2, 3 and 0x0A are format 4's, which readers still read.
enum { HL_TAG_CATEGORY = 4, HL_TAG_MODULE = 5, HL_TAG_RSS = 6, HL_TAG_MARK = 7, HL_TAG_LOST = 8 };
enum { HL_TAG_FREE_FAR = 0x0B, HL_TAG_FREE_HERE = 0x0C, HL_TAG_FREE_OTHER = 0x0D,
       HL_TAG_ALLOC_EXPLICIT = 0x0E, HL_TAG_ALLOC = 0x40 /* | the address code, 0x40…0x4F */ };
// Side section records.
enum { HL_TAG_TICK = 0x50, HL_TAG_INFO = 0x51, HL_TAG_PC = 0x52, HL_TAG_STACK = 0x53 };
enum { HL_CHUNK_NO_STACKS = 1, HL_CHUNK_SIDE = 2 };  // chunk header flags
enum { HL_TAG_BACKING_ALLOC = 0x20, HL_TAG_BACKING_FREE = 0x21, HL_TAG_WARNING = 0x22,
       HL_TAG_WARNING_RESPONSE = 0x23, HL_TAG_FOOTPRINT = 0x24, HL_TAG_MEMORY_LIMIT = 0x25,
       HL_TAG_SAMPLING = 0x26, HL_TAG_COUNTS = 0x27, HL_TAG_CARRIED = 0x28,
       HL_TAG_CARRIED_COUNTS = 0x29, HL_TAG_RSS_PEAK = 0x2A };
enum { HL_MARK_GENERATION = 1, HL_MARK_WARNING = 2 };
enum { HL_CHUNK_EVENTS = 1, HL_CHUNK_TRAILER = 2 };
enum { HL_END_EXIT = 0, HL_END_API = 1, HL_END_WRITE_FAILED = 2, HL_END_MEMORY_LIMIT = 3,
       HL_END_EXEC = 5, HL_END_ROTATED = 6, HL_END_SECCOMP = 7 };
enum { HL_CAT_SWIFT_CLASS = 1, HL_CAT_CLOSURE = 2, HL_CAT_BOX = 3, HL_CAT_SCOPE = 4,
       HL_CAT_SWIFT_OTHER = 5, HL_CAT_BACKING = 6 };
#define HL_REGISTERED_CATEGORY 0x400u  // above every size class, and a 2-byte varint

// A per-thread buffer. Its owner moves it IDLE -> BUSY around each event; another thread that
// wants to flush it (the sampler, stop, exit) moves it IDLE -> FLUSHING. So appending needs no
// lock, only an uncontended compare-and-swap on a line the owner already holds.
// NAMING: another thread names the owner's pending allocation (events.c), writing nothing out.
enum { HL_BUF_FREE = 0, HL_BUF_IDLE = 1, HL_BUF_BUSY = 2, HL_BUF_FLUSHING = 3, HL_BUF_NAMING = 4 };

struct hl_pending {  // the last allocation, written once its Swift header can be read
  uint64_t addr, size, time, counter;
  uint32_t stack, category;
  uint32_t valid, info;  // info: its allocation info, 0 when there was no room for one
};

// Sampling mode's count fields (struct hl_counts, below).
enum { HL_COUNT_ALLOCS, HL_COUNT_FREES, HL_COUNT_BYTES, HL_COUNT_USABLE_IN, HL_COUNT_USABLE_OUT,
       HL_COUNT_FIELDS };

// A thread's buffer. Its first 128 bytes, `data` and `side` have a fixed layout: `heapline
// record` reads them from shared memory after the process has died, to write what the shim could
// not (TraceFormat.md, "Shared buffers"). Records are encoded at `pos` and `side_pos`; `len` and
// `side_len` move up to them only once a record is whole, so a process killed mid-record leaves
// no torn record behind. A side record is whole before the event that needs it.
struct hl_buffer {
  _Atomic uint32_t state;  // 0
  uint32_t serial, tid;    // 4, 8
  uint32_t len;            // 12: bytes of whole records in data
  uint64_t first_alloc;    // 16: alloc counter of the chunk's first ALLOC
  uint64_t base_time;      // 24: time of the chunk's first timed record, when has_time
  uint32_t has_time;       // 32
  uint32_t many;           // 36: 1 when threads share it (more threads than buffers)
  _Atomic uint64_t inflight;  // 40: 1 + the file offset its chunk is being written at; 0 none;
                              // 1 once a chunk of it was lost (hl_buffer_flush)
  struct hl_pending pending;  // 48..96
  uint64_t last_time;         // 96: time of the last timed record or TICK, whole or not
  uint32_t side_len;          // 104: bytes of whole records in side
  uint8_t reserved[20];
  uint8_t data[HL_BUFFER_BYTES];  // 128
  uint8_t side_prefix[8];  // where a flush writes the side section's length, just before it
  uint8_t side[HL_SIDE_BYTES];
  // Private to the process from here on.
  uint32_t pos, side_pos;
  uint32_t reach;  // data bytes that chunks have filled since the pages past the limit went back
  struct hl_counts *held_from;  // sampling: whose counts follow the held-back ALLOC, or NULL
  uint64_t held[HL_COUNT_FIELDS];  // and those counts' totals when it was made
  uint32_t records, allocs, frees;  // in the chunk: all records, ALLOCs, FREEs
  uint32_t events, tick_at;  // event-section records in the chunk; how many at the last TICK
  uint32_t stack_records;    // STACK, PC and MODULE records: a chunk without them is flagged
  uint64_t emit_next;  // counter of the next ALLOC this buffer will write
  uint64_t next_alloc;  // counter of the next allocation this thread makes
  uint64_t last_here, last_far;  // alloc counters of the chunk's previous FREE_HERE, FREE_FAR
  uint64_t checked_at;  // when this thread last looked for others that allocate (record.c)
  uint64_t last_info, last_info_stack, last_stack_id, last_pc_index, last_pc;  // side deltas
  struct hl_model model;
  uint64_t *defined;  // a bit per allocation info that this buffer's records defined
  uint32_t defined_words;  // how many words of it may be set
  uint32_t cache_depth;  // the previous stack, to resume the trie walk where it differs
  uint32_t cache_unwound;  // it is the unwinder's previous stack, whole (stacks.c)
  void *cache_pcs[HL_MAX_DEPTH];
  uint32_t cache_ids[HL_MAX_DEPTH];
  struct hl_node_cache {  // (parent, pc) -> id, so most frames never reach the shared table
    uintptr_t pc;
    uint32_t parent, id;
  } nodes[HL_NODE_CACHE];
  uint32_t infos[1 << HL_INFO_CACHE_BITS];  // the allocation infos it used last (infos.c)
  void *unwind;  // the unwinder's rules and previous stack (unwind.c), kept when reset
  struct hl_counts *counts;  // its thread's counts in sampling mode, for a flusher; NULL if shared
  uint32_t recording;  // the recording its caches of stack ids were made for
  // The class another thread named its pending allocation by, as it freed it while this thread
  // was inside an event (hl_late_key << 16 | category): hl_finish_pending takes it.
  _Atomic uint64_t named_late;
};
_Static_assert(__builtin_offsetof(struct hl_buffer, inflight) == 40, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_buffer, pending) == 48, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_buffer, last_time) == 96, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_buffer, side_len) == 104, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_buffer, data) == 128, "shared layout");

// A call a signal handler made while its thread was inside a shim event: kept here until the
// event ends (events.c), because the handler may not touch the tables the event holds. An event
// that fills its buffer compresses it, which a loaded machine can stretch to tens of
// milliseconds: room for 64 calls. The queue (15 KiB) is mapped when a handler first needs it,
// not kept in TLS: a library loaded where only the static TLS block's small surplus is left
// (under LD_AUDIT) could not be loaded at all, and the program with it.
enum { HL_DEFERRED = 64, HL_DEFERRED_DEPTH = 24 };
struct hl_deferred {
  uint64_t addr, size, time;
  uint32_t kind, depth;  // kind 1 alloc, 2 free
  uint32_t scope, pad;   // the thread's scope when the handler ran
  void *pcs[HL_DEFERRED_DEPTH];
};

// A free that a signal handler made while its thread was inside the shim and its queue was full
// (or could not be mapped), written into the freed block itself (glibc's smallest has 24 bytes):
// a free is never left out, or the live table would keep a block that glibc gave back, which
// the leak scan would read at exit. The header a Swift object's class is read from is gone.
struct hl_freed {
  struct hl_freed *next;  // the thread's previous one
  uint64_t time;
};

// Sampling mode's exact per-thread counts (sampling.c). Only the thread adds to `total`; whoever
// holds the thread's buffer writes what it added since `sent` as a COUNTS record.
// (The fields' names are above struct hl_buffer, which holds counts back: HL_COUNT_FIELDS.)
struct hl_counts {
  uint64_t total[HL_COUNT_FIELDS];
  uint64_t sent[HL_COUNT_FIELDS];
  uint64_t sent_time;
  int64_t countdown;  // bytes until the next sample
  uint64_t rng;       // 0 until the thread's first sampled-mode call
  uint32_t ops;
};

// Per-thread state, in initial-exec TLS so that reaching it never calls malloc.
struct hl_thread {
  int guard;  // non-zero while this thread is inside the shim: its allocations pass through
  int internal;  // the shim's own thread: never recorded
  int in_event;  // inside a shim call of the program's: a call that comes meanwhile is a
                 // signal handler's, deferred (events.c) unless `own`
  int holding;   // holds its buffer: asking for it again would wait for itself
  int own;       // the shim itself is calling something that may allocate
  int unwinding;  // inside the unwinder, which a signal handler must not enter again
  uintptr_t aside_sp;  // while it runs on a stack of the shim's (hl_aside): where it left its own
  _Atomic uint32_t deferred_head, deferred_tail;
  struct hl_deferred *deferred;  // HL_DEFERRED of them; NULL until a handler first defers
  struct hl_freed *freed;  // frees past a full queue, kept in the blocks themselves (events.c)
  struct hl_buffer *buf;
  uint32_t scope;  // category of the innermost named scope, 0 when none
  uint32_t epoch;  // the recording `buf` belongs to
  struct hl_counts counts;
  int exiting;  // its exit destructor has run: no buffer may point at `counts` any more
};
extern __thread struct hl_thread hl_tls __attribute__((tls_model("initial-exec")));

// Whether signal handlers left calls for hl_drain (events.c). Looked at before it is called, every
// event: taking the list is a locked instruction (2.5 % of the Python workload's samples when it
// was taken unlooked at).
static inline int hl_deferred_waiting(void) {
  return atomic_load_explicit(&hl_tls.deferred_head, memory_order_relaxed) !=
             atomic_load_explicit(&hl_tls.deferred_tail, memory_order_relaxed) ||
         __atomic_load_n(&hl_tls.freed, __ATOMIC_RELAXED);
}

// Around every entry into the shim from a program's thread that may record. The order matters:
// with the guard up, `in_event` is always up too, so no handler's call is let through unseen.
static inline void hl_enter(void) {
  hl_tls.in_event++;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  hl_tls.guard++;
}
static inline void hl_leave(void) {
  hl_tls.guard--;
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
  hl_tls.in_event--;
}

// clock.c
uint64_t hl_now(void);  // nanoseconds since the recording started
uint64_t hl_clock_due(void);  // when the clock next calibrates (UINT64_MAX: never)
uint64_t hl_monotonic_ns(void);
void hl_clock_start(void);  // a new recording's time 0, and its clock calibrated anew
extern uint64_t hl_start_ns;

// threads.c
// Calls fn(arg) with the stack pointer at `top` (16-byte aligned), and returns on the caller's
// stack: for work that needs more stack than the program's thread may have left (unwind.c).
void hl_on_stack(void (*fn)(void *), void *arg, void *top);
// hl_on_stack for the program's threads: a leak scan that stops the thread there scans its own
// stack from where it left it (roots.c), which it could not find from the stack pointer.
void hl_aside(void (*fn)(void *), void *arg, void *top);
struct hl_buffer *hl_acquire(void);  // this thread's buffer, BUSY; NULL when not recording
void hl_release(struct hl_buffer *b);
struct hl_buffer *hl_take_by_serial(uint32_t serial);  // another thread's, if idle; no waiting
void hl_give_back(struct hl_buffer *b);  // what hl_take_by_serial took
extern _Atomic(const void *) hl_watched_task;  // watch.c: a Swift task whose allocations are noted
void hl_watch_note(const void *watched, uint32_t serial, uint64_t counter);
void hl_name_late(uint32_t serial, uint64_t named);  // into that serial's buffer's named_late
// The allocation a named_late names: its counter's low 32 bits and its serial's low 16.
static inline uint64_t hl_late_key(uint32_t serial, uint64_t counter) {
  return (counter & 0xFFFFFFFFu) << 16 | (serial & 0xFFFFu);
}
void hl_threads_init(void);
uint32_t hl_threads_begin_recording(void);  // the new recording's number
extern _Atomic uint32_t hl_epoch;
void hl_flush_all(int final);  // flush every thread's buffer that can be taken
void hl_threads_after_fork_child(void);

// record.c: encoding into a BUSY buffer. Each call makes room first.
void hl_ensure(struct hl_buffer *b, uint32_t bytes);
void hl_put_u8(struct hl_buffer *b, uint8_t v);
void hl_put_varint(struct hl_buffer *b, uint64_t v);
void hl_put_bytes(struct hl_buffer *b, const void *p, uint32_t n);
void hl_put_time(struct hl_buffer *b, uint64_t t);
void hl_emit_alloc_pending(struct hl_buffer *b);
struct hl_block;
void hl_emit_free(struct hl_buffer *b, uint64_t time, const struct hl_block *blk);
void hl_emit_stack(struct hl_buffer *b, uint32_t id, uint32_t parent, uint32_t pc_index);
void hl_emit_pc(struct hl_buffer *b, uint32_t index, uintptr_t pc);
// The side section (TraceFormat.md, "Payload"): room first, then the fields, then the commit.
void hl_side_ensure(struct hl_buffer *b, uint32_t bytes);
void hl_side_u8(struct hl_buffer *b, uint8_t v);
void hl_side_varint(struct hl_buffer *b, uint64_t v);
void hl_side_bytes(struct hl_buffer *b, const void *p, uint32_t n);
void hl_side_commit(struct hl_buffer *b);
void hl_emit_category(struct hl_buffer *b, uint32_t id, int kind, const char *name, size_t len);
void hl_emit_rss(struct hl_buffer *b, uint64_t time, uint64_t bytes, uint64_t peak);
void hl_emit_mark(struct hl_buffer *b, uint64_t time, int kind, const char *name, size_t len);
void hl_buffer_flush(struct hl_buffer *b);  // writes the buffer as one chunk and empties it
void hl_buffer_reset(struct hl_buffer *b, uint32_t serial, uint32_t tid, uint32_t recording);
void hl_buffers_now(uint32_t made);  // threads' own buffers made so far: sets their chunks' limit
void hl_buffer_forget_infos(struct hl_buffer *b);  // a new file defines every info again
void hl_emit_lost(struct hl_buffer *b, uint64_t time, int reason, uint64_t count);
void hl_emit_sampling(struct hl_buffer *b, uint64_t bytes);
// Marks the record encoded since the last commit as whole (see struct hl_buffer).
static inline void hl_commit_record(struct hl_buffer *b) {
  b->records++;
  b->events++;
  __atomic_store_n(&b->len, b->pos, __ATOMIC_RELEASE);
}

// writer.c
int hl_writer_open(const char *path, int in_process);
// Writes `b`'s whole records, both sections, as one chunk.
void hl_writer_chunk(struct hl_buffer *b, uint64_t base_time);
void hl_writer_close(int reason);
// Rotation: finishes the file (trailer, synced, closed) and opens `path` as the next one.
int hl_writer_next(const char *path, int in_process);
int hl_writer_failed(void);  // the errno of the write that failed, 0 when none did
void hl_writer_abandon(void);  // in a fork child: close without writing

// shared.c: where buffers live, and what `heapline record` reads after the process has died.
struct hl_commit {  // the trace file up to its last whole chunk
  uint64_t offset, chunks, allocs, frees;
};
enum { HL_LOST_MEMORY = 1, HL_LOST_SIGNAL = 2, HL_LOST_INSIDE = 3, HL_LOST_REASONS = 4 };
// EXECED: the trace was finished for an exec and moved aside; the next program's shim starts a
// recording, so a state still EXECED at the end says the program after the exec had no shim.
enum {
  HL_SHARED_NONE = 0, HL_SHARED_RECORDING = 1, HL_SHARED_FINISHED = 2, HL_SHARED_FAILED = 3,
  HL_SHARED_EXECED = 4
};
enum { HL_FLAG_REOPENED = 2, HL_FLAG_CATEGORIES_FULL = 4, HL_FLAG_PRIVATE_BUFFER = 8 };
// seccomp.c: the filters the program installed through prctl.
int hl_seccomp_kills_scan(void);    // one would kill the program for a call of the leak scan
int hl_seccomp_filters_seen(void);  // how many it installed through prctl
void hl_end_for_seccomp(void);      // control.c: ends a recording that such a filter forbids

// foreign.c: the process's allocator, when it is not glibc's; the shim then steps aside.
enum hl_allocator_kind { HL_ALLOC_UNKNOWN = 0, HL_ALLOC_GLIBC = 1, HL_ALLOC_FOREIGN = 2 };
struct hl_foreign {
  void *(*malloc)(size_t);
  void (*free)(void *);
  void *(*calloc)(size_t, size_t);
  void *(*realloc)(void *, size_t);
  void *(*memalign)(size_t, size_t);
  void *(*aligned_alloc)(size_t, size_t);
  int (*posix_memalign)(void **, size_t, size_t);
  void *(*valloc)(size_t);
  void *(*pvalloc)(size_t);
  char name[64];  // the library's file name
};
extern struct hl_foreign hl_foreign;
extern _Atomic int hl_allocator;
int hl_foreign_allocator_slow(void);
// The function `name` that a call from this library would reach without it: the first
// definition after it in the dynamic linker's order, found without a lock or an allocation.
void *hl_next_definition(const char *name);
// True when every call must go to hl_foreign: one load and a branch on glibc's usual path.
static inline int hl_foreign_allocator(void) {
  return HL_UNLIKELY(atomic_load_explicit(&hl_allocator, memory_order_relaxed) != HL_ALLOC_GLIBC) &&
         hl_foreign_allocator_slow();
}

struct hl_shared_header {
  char magic[8];  // "HLSHARED"
  uint32_t version, header_bytes, slot_bytes, data_offset;
  _Atomic uint32_t slots;  // slots handed out so far, at header_bytes + i * slot_bytes
  _Atomic uint32_t state;
  _Atomic uint64_t seq;  // commits[seq & 1] is the last whole commit
  struct hl_commit commits[2];
  _Atomic uint64_t lost[HL_LOST_REASONS];  // by reason; [0] unused
  _Atomic uint32_t flags;
  uint32_t execs, exec_first, exec_last;  // traces moved aside by exec: PATH.first … PATH.last
  uint32_t side_offset;  // of a buffer's side section, as data_offset is of its events
};
extern struct hl_shared_header *hl_shared;  // never NULL once a recording has begun
struct dl_phdr_info;
int hl_is_preload_library(const struct dl_phdr_info *info);  // modules.c
void hl_shared_attach(const char *path);   // the recorder's memory, or private memory
void hl_shared_note_foreign_malloc(const char *path, const char *library);  // not this malloc
void hl_shared_begin(void);                 // a new recording
struct hl_buffer *hl_shared_new_buffer(void);  // a fresh buffer; NULL when out of memory
void hl_shared_drop_buffer(struct hl_buffer *b);  // unmaps one
void hl_shared_detach_in_child(void);       // a fork child must never write the parent's memory
void hl_lost(int reason);
void hl_lost_poll(struct hl_buffer *b, uint64_t now);  // LOST records for new losses

// rotate.c: HEAPLINE_ROTATE_SECONDS, a new file every period.
const char *hl_rotate_first_path(const char *path, int in_process);  // the file to open first
void hl_rotate_poll(uint64_t now);  // on the shim's thread
uint64_t hl_rotate_due(void);       // when hl_rotate_poll has work next (UINT64_MAX: never)
void hl_rotate_stop(void);          // before the recording ends
void hl_rotate_forget(void);        // in a fork child
const char *hl_rotate_current(void);  // the file being written when rotating, else NULL

// options.c: every HEAPLINE_* setting, read once at load; then the environment is scrubbed.
void hl_options_load(void);
const char *hl_option(const char *name);  // NULL when unset
int hl_is_setting(const char *entry);  // "NAME=value" names one of the shim's settings
size_t hl_options_export(char **out, size_t max);  // "NAME=value" for exec (exec.c)
long hl_option_long(const char *name, long fallback, long min, long max);

// sampling.c: HEAPLINE_SAMPLE_BYTES. Hidden, so that the hooks reach them without the PLT.
#define HL_HIDDEN __attribute__((visibility("hidden")))
extern HL_HIDDEN uint64_t hl_sample_bytes;  // 0 when every allocation is recorded
void hl_sampling_begin(void);
HL_HIDDEN void hl_sample_alloc(void *p, size_t size);
HL_HIDDEN void hl_sample_free(void *p);
HL_HIDDEN void *hl_sample_realloc(void *old, size_t size);
void hl_counts_emit(struct hl_buffer *b, struct hl_counts *c, uint64_t now);
void hl_counts_write(struct hl_counts *c);  // the calling thread's, through its buffer
// The counts as they stand, to be written just after the ALLOC that `b` holds back (then NULL).
void hl_counts_hold(struct hl_buffer *b, struct hl_counts *c);
void hl_counts_emit_held(struct hl_buffer *b, uint64_t now);
void hl_counts_attach(struct hl_buffer *b);
void hl_counts_emit_carried(struct hl_buffer *b, uint64_t now);  // rotate.c, every buffer held

// fds.c: the shim's descriptors sit at the top of the program's range, close-on-exec.
int hl_fd_park(int fd);
int hl_writer_descriptor(void);  // writer.c: the trace's descriptor, or -1 (for close_range)
int hl_unwind_pipe_intact(void);  // fds.c: may libunwind be called
int hl_fd_names(int fd, dev_t dev, ino_t ino);  // `fd` is open on that file still

// stacks.c
// Where the program called an allocating wrapper: the stack pointer at its entry (the slot of
// the program's return address) and the program's rbp and rbx, which it has not touched yet
// (hooks.c's entry stubs). The unwinder starts there rather than stepping over the shim's frames.
struct hl_entry {
  uintptr_t sp, rbp, rbx;
};
// Unwinds the caller (from `at`, or from here when NULL) and returns its stack id.
uint32_t hl_capture_stack(struct hl_buffer *b, const struct hl_entry *at);
void hl_unwind_forget_stacks(struct hl_buffer *b);  // a new recording numbers its stacks anew
uint32_t hl_intern_pcs(struct hl_buffer *b, void *const *pcs, uint32_t n);
void hl_stacks_init(void);
void hl_stacks_reset(void);
void hl_stacks_memory(uint64_t *bytes, uint64_t *cut);  // for the trailer
// For the leak scan: the stack lock, and the pc and parent of some stack ids while it is held.
void hl_stacks_lock(void);
void hl_stacks_unlock(void);
void hl_stacks_lookup_locked(const uint32_t *ids, size_t n, uintptr_t *pcs, uint32_t *parents);

// live.c: address -> block, exact and in memory the shim maps itself.
struct hl_block {
  uint64_t addr, size, counter;
  uint32_t serial, stack, category;
  uint32_t info;  // to store: the interned (size, stack, category), or 0 to intern it then
};
// Allocation infos (infos.c): `cache` is a thread's hl_buffer.infos, or NULL. 0: no room.
uint32_t hl_info_intern(uint32_t *cache, uint64_t size, uint32_t stack, uint32_t category);
uint32_t hl_info_cached(const uint32_t *cache, uint64_t size, uint32_t stack, uint32_t category);
void hl_info_get(uint32_t info, uint64_t *size, uint32_t *stack, uint32_t *category);
void hl_infos_reset(void);
uint64_t hl_infos_memory(void);
void hl_live_init(void);
void hl_live_insert(const struct hl_block *blk, struct hl_block *evicted, int *had_evicted);
int hl_live_remove(uint64_t addr, struct hl_block *out);
// The same, calling `then` with the block while its shard is still held, so that no thread that
// looks for the block after the removal can miss what `then` did.
int hl_live_remove_then(uint64_t addr, struct hl_block *out,
                        void (*then)(const struct hl_block *, void *), void *context);
void hl_live_put_back(const struct hl_block *blk);  // hooks.c: after a failed realloc
// A block's category, set while it is still the allocation `counter`; returns 0 when it is gone.
int hl_live_set_category(uint64_t addr, uint64_t counter, uint32_t category, uint32_t info);
// Reads the first two words of a block that is still the allocation (serial, counter) and names
// it from them, holding the block's shard so that no other thread can free it meanwhile (live.c).
typedef int (*hl_namer)(const uint64_t words[2], void *context, uint32_t *category,
                        uint32_t *info);
int hl_live_name(uint64_t addr, uint32_t serial, uint64_t counter, uint64_t words[2],
                 hl_namer name, void *context, uint32_t *category, uint32_t *info);
uint64_t hl_live_bytes_in(uint32_t category, uint64_t *blocks);
void hl_live_clear(void);
void hl_live_memory(uint64_t *bytes, uint64_t *blocks);  // what the table maps, what it holds
// For the leak scan: every shard's lock, and while it is held the blocks, each with a reference
// that hl_live_block_at reads back.
void hl_live_lock_all(void);
void hl_live_unlock_all(void);
uint64_t hl_live_count_locked(void);
void hl_live_each_locked(void (*each)(const struct hl_block *, uint32_t ref, void *),
                         void *context);
void hl_live_block_at(uint32_t ref, struct hl_block *out);

// categories.c: size classes, named scopes and the Swift type cache.
uint32_t hl_size_class(uint64_t size);
uint32_t hl_category_register(struct hl_buffer *b, int kind, const char *name, size_t len);
int hl_category_is_scope(uint32_t id);
uint32_t hl_category_find(const char *name);
uint32_t hl_categories_full(void);  // HL_FLAG_CATEGORIES_FULL once a category found no room
void hl_categories_mark_full(void);  // a category, or a Swift type, found no room
void hl_categories_emit_pending(struct hl_buffer *b);  // on the shim's thread

// swifttypes.c
void hl_swift_init(void);
uint32_t hl_swift_classify_in(struct hl_buffer *b, uint64_t size, const uint64_t words[2]);
int hl_swift_classify_known(const uint64_t words[2], uint32_t *category);
void hl_swift_begin(void);
void hl_swift_name_pending(struct hl_buffer *b);  // names new Swift types; never in a hook
extern int hl_swift_present;

// modules.c
void hl_modules_emit_if_changed(struct hl_buffer *b, int force);

// sampler.c: the shim's own thread (RSS samples, periodic flush, Swift type names).
void hl_sampler_start(void);
void hl_sampler_stop(void);
int hl_sampler_pause(void);   // stops the thread if it runs (1), for hl_sampler_resume after
void hl_sampler_resume(void);
void hl_sampler_wake(void);  // async-signal-safe: the shim's thread runs its polls now
uint64_t hl_read_rss(void);
void hl_rss_begin(struct hl_buffer *b);  // the recording's first sample, at time 0
void hl_rss_sample(struct hl_buffer *b, uint64_t time, uint64_t rss);  // with VmHWM if it rose
void hl_marks_install(void);  // the mark signal and timer, from the environment
void hl_marks_poll(struct hl_buffer *b, uint64_t now);  // on the sampler's thread
// leakctl.c: leak scans at exit, on a signal, on a timer (HEAPLINE_LEAKS_*) and from the API.
enum { HL_TAG_LEAK_SCAN = 0x10, HL_TAG_LEAK_BLOCK = 0x11, HL_TAG_LEAK_EDGE = 0x12,
       HL_TAG_LEAK_FAILED = 0x16 };
void hl_leaks_sampler_started(void);  // on the sampler's thread: its stack is never a root
extern _Atomic int32_t hl_sampler_tid;  // the shim's thread while it runs; 0 when it does not
void hl_leaks_poll(uint64_t now);     // on the sampler's thread: signal and timer scans
uint64_t hl_leaks_due(void);          // when the timer's next scan is due (UINT64_MAX: never)
void hl_leaks_at_exit(void);          // from the shim's destructor, before recording ends
int hl_stopworld_signal(void);        // other threads of the shim must not block it
// Blocks every signal, or every one but the leak scan's stop signal (`stop_too` 0), keeping the
// mask it replaced in `old` when not NULL. `old` is a sigset_t.
void hl_block_signals(int stop_too, void *old);
int hl_stop_signal_handled(void);  // the program has a handler for the stop signal
void hl_stop_signal_changed(void);  // the shim's thread follows it before this returns

// backing.c: memory that code maps itself and reports (heapline_backing_alloc).
uint64_t hl_backing_total(void);  // bytes reported now, recording or not

// footprint.c: RSS broken down, written at the end of a recording and at a memory-limit kill.
// Measured while recording is ON (frees still leave the live table before the real free), and
// written once the sampler's buffer is free.
enum { HL_FOOTPRINT_END = 1, HL_FOOTPRINT_LIMIT = 2 };
struct hl_footprint {
  uint64_t rss, requested, usable, blocks, backing, allocator_free;
};
void hl_footprint_measure(struct hl_footprint *f);
void hl_footprint_write(struct hl_buffer *b, int reason, const struct hl_footprint *f);
// live.c: walks the table, summing `usable` over the blocks.
void hl_live_prefetch(uint64_t addr);
uint64_t hl_live_usable_bytes(uint64_t (*usable)(uint64_t addr, uint64_t size, void *context),
                              uint64_t (*settle)(void *context), void *context,
                              uint64_t *requested, uint64_t *blocks);

// pressure.c and budget.c: memory warnings, their observers and their sources.
enum { HL_SOURCE_API = 1, HL_SOURCE_TIMER = 2, HL_SOURCE_SIGNAL = 3, HL_SOURCE_LIMIT = 4,
       HL_SOURCE_PSI = 5 };
void hl_pressure_install(void);  // from the environment, when `heapline record` started us
// Writes the warning's MARK and WARNING records into `b` (or the calling thread's buffer when
// NULL) and queues it for the observers; returns its serial.
uint32_t hl_pressure_raise(struct hl_buffer *b, int level, int source, uint64_t time,
                           uint64_t footprint, uint64_t limit, int deliver);
void hl_pressure_after_fork_child(void);
void hl_pressure_quiesce(void);  // lets a round of observers in progress record its answers
void hl_budget_install(void);  // --warn-at and --memory-limit, from the environment
void hl_budget_tick(struct hl_buffer *b, uint64_t now, uint64_t rss);  // on the sampler's thread
void hl_memory_limit_kill(uint64_t now, uint64_t rss, uint64_t limit);  // does not return

// osmem.c: memory for the shim's tables, straight from the kernel.
void *hl_map(size_t bytes);
int hl_file_fits(uint64_t end);  // under the file size limit (ulimit -f)
void hl_unmap(void *p, size_t bytes);
void *hl_remap(void *p, size_t bytes, size_t grown);
void hl_spin_lock(_Atomic int *lock);
// pthread_cancel acts at the next cancellation point (open, close, write, and what libunwind
// calls), and one inside the shim unwound the thread out of it holding its buffer or a lock:
// the thread's exit, or every other thread, then waited for them forever. The shim's slow
// paths that reach such calls hold cancellation off (osmem.c); a cancel still pending acts at
// the program's own next cancellation point, as it would untraced.
int hl_cancel_hold(void);
void hl_cancel_release(int held);
void hl_spin_unlock(_Atomic int *lock);
void hl_log(const char *msg, const char *detail);  // one line on stderr, no malloc
void hl_log_init(void);  // notes which file the program's stderr is
int hl_install_handler(int sig, void (*handler)(int));
uint64_t hl_env_ms_as_ns(const char *name);

#endif
