// The leak scan's own declarations, shared by its files (scan*.c, stopworld.c, roots.c,
// heapwalk.c, procmaps.c, leakctl.c, leakrecords.c). Nothing here is public: see heapline.h.
//
// The scan runs with the world stopped, when any other thread may hold malloc's lock, the
// dynamic loader's lock or a stdio lock. So none of this code calls malloc, dl_iterate_phdr or
// stdio while the world is stopped: its memory comes from mmap (hl_vec), and /proc is read with
// raw system calls.
#ifndef HEAPLINE_LEAKSCAN_H
#define HEAPLINE_LEAKSCAN_H

#include <stddef.h>
#include <stdint.h>

#include "internal.h"

// A growable array in memory from mmap; grows with mremap, never with malloc.
struct hl_vec {
  uint8_t *data;
  size_t len, cap, elem;  // len and cap count elements of `elem` bytes
};
void *hl_scan_map(size_t bytes);  // hl_map, its pages faulted in at once when large
void hl_vec_init(struct hl_vec *v, size_t elem);
int hl_vec_reserve(struct hl_vec *v, size_t extra);  // room for `extra` more; 0 on failure
void *hl_vec_push(struct hl_vec *v);  // a new element (not zeroed), or NULL when out of memory
void hl_vec_free(struct hl_vec *v);
#define HL_VEC_AT(v, type, i) (((type *)(v)->data)[i])

// osmem.c: the registry of the shim's own mappings (hl_map, and the scan's), never roots.
void hl_own_add(void *p, size_t bytes);
void hl_own_remove(void *p);
size_t hl_own_ranges(uintptr_t (*out)[2], size_t max);
extern _Atomic int hl_own_overflow;  // a mapping went unregistered: anonymous memory is no root

// procmaps.c: /proc/self/maps, parsed.
enum { HL_MAP_R = 1, HL_MAP_W = 2, HL_MAP_X = 4, HL_MAP_FILE = 8, HL_MAP_HEAP = 16,
       HL_MAP_STACK = 32, HL_MAP_SHARED = 64, HL_MAP_SPECIAL = 128 };  // [vvar], [vdso]…
struct hl_mapping {
  uintptr_t lo, hi;
  uint32_t flags;
};
int hl_maps_read(struct hl_vec *out);  // of struct hl_mapping, in address order; 0 or errno
const struct hl_mapping *hl_maps_find(const struct hl_vec *maps, uintptr_t addr);
// The bounds of the mapping that holds `addr`, asked of the kernel alone: 0 when it cannot say.
int hl_maps_query(uintptr_t addr, uintptr_t *lo, uintptr_t *hi);
int hl_safe_read(uintptr_t addr, void *out, size_t bytes);  // 0 when it is not readable

// scanindex.c: the live blocks, sorted by address, with a directory for interior lookups.
// 12 bytes a block: beside the live table, the index is most of what the scan of a program that
// exits with millions of blocks costs, and that scan runs by default. Addresses have 48 bits
// (x86-64's user space has 47); sizes past 16 bits are read from the live table.
struct hl_sblock {
  uint32_t addr_lo;
  uint16_t addr_hi;
  uint16_t size;  // at least 1, so that malloc(0) can be found; HL_SBLOCK_BIG: see the table
  uint32_t ref;   // shard << 24 | slot, to find the block's record in the live table
};
#define HL_SBLOCK_BIG UINT16_MAX
#define HL_SBLOCK_ADDR_LIMIT (1ull << 48)
uint64_t hl_sblock_big_end(const struct hl_sblock *b);  // from the live table
static inline uint64_t hl_sblock_addr(const struct hl_sblock *b) {
  return b->addr_lo | (uint64_t)b->addr_hi << 32;
}
static inline uint64_t hl_sblock_end(const struct hl_sblock *b) {
  return b->size != HL_SBLOCK_BIG ? hl_sblock_addr(b) + b->size : hl_sblock_big_end(b);
}
struct hl_index {
  struct hl_sblock *blocks;
  uint32_t count;
  uint64_t lo, hi;  // every block lies in [lo, hi)
  uint64_t live_bytes;
  // Directory: for each 1 MiB region that holds a block start, the first block index of each of
  // its 1 KiB buckets (HL_BUCKETS + 1 entries, the last one the region's end). Regions are found
  // by number in an open-addressing table; sorted_regions serves addresses outside them.
  struct hl_vec keys;     // uint64_t region number + 1 per slot; 0 marks an empty slot
  struct hl_vec ordinal;  // uint32_t per slot: the region's directory
  struct hl_vec dirs;     // uint32_t, HL_BUCKETS + 1 per region
  struct hl_vec sorted;   // uint64_t region number << 32 | ordinal, in address order
  uint32_t regions, shift;
};
enum { HL_BUCKETS = 1024 };
// With the live table locked; 0, ENOMEM, or EOVERFLOW for a block past HL_SBLOCK_ADDR_LIMIT.
int hl_index_build(struct hl_index *ix);
void hl_index_free(struct hl_index *ix);
// The block that holds `p`, or -1. Sets *interior when p is not the block's start.
int64_t hl_index_lookup(const struct hl_index *ix, uint64_t p, int *interior);

// stopworld.c: stops every other thread with a signal and takes its registers.
enum { HL_REGS = 23 + 32 };  // general registers, then XMM0-15 as pairs of words
enum { HL_THREAD_PENDING = 0, HL_THREAD_STOPPED = 1, HL_THREAD_GONE = 2,
       HL_THREAD_UNRESPONSIVE = 3 };  // blocks the signal: its stack is scanned whole
struct hl_thread_state {
  int32_t tid;
  _Atomic uint32_t acked;  // the stop generation this thread has answered
  uint32_t stopped;        // HL_THREAD_*
  uint64_t sp, tp;
  uint64_t regs[HL_REGS];
};
struct hl_world {
  struct hl_thread_state *threads;  // open addressing by tid; tid 0 is empty
  const uint32_t *used;             // the slots in use
  uint32_t capacity, used_count, count, stopped, unresponsive;
  uintptr_t self_sp;  // about where the scanning thread's own stack is (not the scan's, aside)
  int ptraced;        // stopped with ptrace, not signals
};
void hl_stopworld_install(void);
// 0 or errno. `self_sp` is where the calling thread's own stack is (the scan may run aside).
int hl_world_stop(struct hl_world *w, int32_t self, uintptr_t self_sp);
void hl_world_resume(struct hl_world *w);
int hl_ptrace_stop(int32_t self, struct hl_thread_state *(*slot_for)(int32_t tid));  // stopptrace.c
void hl_ptrace_resume(void);
extern uintptr_t hl_sampler_frame, hl_sampler_tp;  // a frame on its stack, and its thread pointer

// The scan itself (scan.c): reachability states of blocks.
enum { HL_UNSEEN = 0, HL_SEED = 1, HL_POSSIBLE = 2, HL_REACHED = 3 };
enum { HL_EDGE_INTERIOR = 1 };
struct hl_edge {
  uint32_t from, to;  // block indices
  uint32_t flags;
};
struct hl_scan {
  struct hl_index ix;
  uint8_t *state;
  struct hl_vec frontier;  // of uint32_t
  // Edges, coded: each is from's step from the edge before and to's distance from from,
  // zigzagged, doubled and plus HL_EDGE_INTERIOR, as two varints; 2 to 5 bytes an edge, not 12:
  // a program that exits with a lost list of millions of nodes has as many edges.
  struct hl_vec edges;  // bytes
  size_t edge_count;
  uint32_t last_from;
  struct hl_edge recent[8];  // the last edges from `from`, which one pointer more would repeat
  uint32_t recent_count;
  struct hl_vec maps;      // of struct hl_mapping
  struct hl_vec clipped;   // uint32_t, in order: blocks with pages the program made unreadable
  // Swift's pointer encodings (scan.c), read only where its runtime is: in a C program a
  // tagged word is no pointer, as memcheck takes it.
  int swift;
  uint64_t addr_mask;   // what of a word is its address: the top byte is Swift's spare bits
  uint64_t start_mask;  // a pointer within a block's first word counts as one to its start
  uint64_t root_bytes;
  struct hl_vec scanned;  // struct hl_mapping: the root regions scanned, while `record` is set
  int record;
  int phase;      // 0 reachable (start pointers), 1 possibly reachable, 2 edges of the rest
  uint32_t from;  // in phase 2, the block being scanned
  struct hl_graph *graph;  // with --graph (HEAPLINE_LEAKS_GRAPH): who reached each block first
  uint32_t root_kind;      // HL_ROOT_*: what roots.c scans now, for the graph's roots
  int32_t root_tid;        // the thread whose stack, registers or TLS they are
};
int hl_scan_begin(struct hl_scan *s);  // index and state, with the live table locked; 0 or errno
uint32_t hl_scan_skip_unmapped(struct hl_scan *s);  // after maps are read; returns how many
void hl_scan_root(struct hl_scan *s, uintptr_t lo, uintptr_t hi);  // a root region, clipped
void hl_scan_root_copied(struct hl_scan *s, uintptr_t lo, uintptr_t hi);  // may be unmapped
void hl_scan_registers(struct hl_scan *s, const uint64_t *regs, size_t count);
void hl_scan_mark_root_block(struct hl_scan *s, int64_t block);  // a block that is a root
void hl_scan_finish(struct hl_scan *s);  // floods, then finds possibly reachable blocks, edges
// The edge that starts at byte *at of s->edges, after the one before it (*edge, zeroed for the
// first); moves *at past it.
void hl_scan_edge_next(const struct hl_scan *s, size_t *at, struct hl_edge *edge);
void hl_scan_end(struct hl_scan *s);

// A block in the scan's records (leakrecords.c).
struct hl_leak_block {
  uint64_t addr, size, counter;
  uint32_t serial, stack, category, kind;  // kind 1 lost, 2 possibly lost
  uint64_t words[2];  // the first two words, to name a Swift class after the world resumes
};

// Its first two words, when a Swift class may still have to be named from them, read through
// the kernel: with the other threads running again, one may have made the block's page
// unreadable (mprotect) since the maps were read. Zero when not needed or not readable.
static inline void hl_leak_block_words(struct hl_leak_block *k) {
  k->words[0] = k->words[1] = 0;
  if (hl_swift_present && !k->category && k->size >= 16 &&
      !hl_safe_read((uintptr_t)k->addr, k->words, sizeof k->words))
    k->words[0] = k->words[1] = 0;
}

// scangraph.c: with --graph, the reachability graph of live blocks. Roots are all scanned
// before phase 0 floods, and then it floods breadth first, so each block's parent (the block or
// root that first reached it) is on a shortest path from the roots. Without --graph, the scan
// floods depth first after each root, as before, and none of this runs.
enum { HL_ROOT_GLOBAL = 1, HL_ROOT_STACK = 2, HL_ROOT_REGISTERS = 3, HL_ROOT_TLS = 4,
       HL_ROOT_REGION = 5, HL_ROOT_MAPPING = 6, HL_ROOT_RUNTIME = 7, HL_ROOT_HEAP = 8 };
enum { HL_TAG_LEAK_GRAPH = 0x13, HL_TAG_LEAK_ROOT = 0x14, HL_TAG_LEAK_NODE = 0x15 };
#define HL_PARENT_ROOT 0x80000000u
#define HL_PARENT_NONE 0xFFFFFFFFu
struct hl_graph_root {
  uint32_t kind;
  int32_t tid;
  uint64_t lo, hi;  // for registers, where the scan copied them: offsets count from lo
};
struct hl_graph {
  uint32_t *parent;   // per block: HL_PARENT_NONE, a block, or HL_PARENT_ROOT | root number
  uint64_t *offset;   // per block: the pointer's offset in its parent, or address in its root
  struct hl_vec roots;  // of struct hl_graph_root
  uint32_t *order;      // the blocks phase 0 reached, in the order it reached them
  uint32_t reached;
  uint32_t holder;      // the block, or HL_PARENT_ROOT | root, whose words are being scanned
  uintptr_t base;       // where the holder's offsets count from (0 for a root: addresses)
};
int hl_graph_begin(struct hl_scan *s);  // after hl_scan_begin; 0 or ENOMEM
void hl_graph_end(struct hl_scan *s);
void hl_graph_root(struct hl_scan *s, uintptr_t lo, uintptr_t hi, uintptr_t base);
struct hl_graph_node {
  struct hl_leak_block block;  // kind unused
  uint64_t parent;  // 2 × node (an earlier one), or 2 × root + 1
  uint64_t offset;
};
struct hl_graph_result {
  struct hl_graph_root *roots;
  struct hl_graph_node *nodes;
  uint32_t root_count, node_count, node_capacity;
};
int hl_graph_collect(struct hl_scan *s, struct hl_graph_result *r);  // live table locked
void hl_graph_release(struct hl_graph_result *r);
void hl_emit_leak_graph(struct hl_buffer *b, uint32_t scan, const struct hl_graph_result *r);

// roots.c: every root of the program, scanned into `s`.
struct hl_modules;  // writable segments of loaded modules, taken before the world stops
struct hl_modules *hl_modules_snapshot(void);
extern _Atomic uint64_t hl_dl_begun, hl_dl_ended;  // dl.c: dlopen and dlclose calls
void hl_modules_release(struct hl_modules *m);
void hl_roots_scan(struct hl_scan *s, struct hl_modules *m, struct hl_world *w,
                   const uint64_t *self_regs, size_t nregs, uintptr_t self_sp, int self_tls,
                   int untracked);
void hl_roots_lock(void);  // the regions that the API registered
void hl_roots_unlock(void);
void hl_roots_init(void);  // looks up glibc's and the Swift runtime's symbols, before any scan
int hl_function_range(const char *name, uintptr_t *lo, uintptr_t *hi);  // from its dynamic symbol

// exitframes.c: where the frames of the program's call to exit() start, 0 when it made none
// (main returned); their saved callee-saved registers in `regs`. Unwinds: before the world stops.
void hl_exit_frames_init(void);
uintptr_t hl_exit_caller_frames(uint64_t regs[6]);

// rootmaps.c: every other writable private mapping (anonymous, or a file's private copy) is a
// root, as memcheck takes it, less malloc's heaps, the shim's memory, modules' segments (in
// `extents`, of struct hl_mapping), stacks (`dead`: their frames below the stack pointer) and
// the regions scanned already. Returns 0 when it could not run (the registry overflowed).
int hl_mapping_roots_scan(struct hl_scan *s, const struct hl_vec *extents,
                          const struct hl_vec *dead);

// heapwalk.c: malloc chunks that the live table does not know: roots, since their contents are
// unknown to the recording (blocks made before it started, or by the shim's own thread).
void hl_heapwalk_init(void);  // before any scan: learns glibc's tcache key
void hl_heapwalk_scan(struct hl_scan *s, const struct hl_world *w, int mapped_chunks);
uintptr_t hl_main_heap_end(uintptr_t lo, uintptr_t hi);  // past it, [heap] is the program's
// Every glibc heap, as struct hl_mapping: the [heap] mapping, and each other arena's heaps,
// from the arena list that starts at the main arena (found by hl_main_arena_chunk_pointers),
// and any 64 MiB-aligned mapping that starts with a heap's header.
void hl_heap_ranges(const struct hl_scan *s, struct hl_vec *out);
// The part of glibc's main arena that points at chunk headers, if the arena lies in [lo, hi).
int hl_main_arena_chunk_pointers(uintptr_t lo, uintptr_t hi, uintptr_t *from, uintptr_t *to);

// leakrecords.c: the scan's results in the trace (TraceFormat.md, tags 0x10-0x12).
struct hl_leak_scan_info {
  uint32_t id, trigger, flags, threads_stopped, threads_unresponsive;
  uint64_t time, live_blocks, live_bytes, root_bytes, stop_ns, total_ns;
};
void hl_emit_leak_failed(struct hl_buffer *b, uint64_t time, int trigger, int err);
void hl_emit_leak_scan(struct hl_buffer *b, const struct hl_leak_scan_info *info, uint32_t count,
                       size_t edge_count);  // then `count` blocks, then `edge_count` edges
void hl_emit_leak_block(struct hl_buffer *b, uint32_t scan, const struct hl_leak_block *k);
void hl_emit_leak_edge(struct hl_buffer *b, uint32_t scan, uint32_t from, uint32_t to,
                       uint32_t flags);

#endif
