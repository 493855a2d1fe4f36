// The flood fill of the leak scan. Phase 0 follows pointers to block starts from the roots and
// marks what it reaches; a pointer into a block's middle only marks it as a seed. Phase 1
// floods from the seeds through any pointer: what it reaches is possibly reachable (only an
// interior pointer leads there). Phase 2 scans the blocks that neither reached, and records the
// pointers between them, for the analysis to find roots and cycles. The frontier is an
// explicit stack, never recursion: a list of millions of nodes must not overflow anything.
// With --graph (scangraph.c), phase 0 waits until every root is read, then floods breadth first
// with the frontier as a queue, noting who reached each block first.
//
// Where the Swift runtime is loaded, words are read as Swift stores pointers on x86-64
// (swift/stdlib/public/SwiftShims/System.h); in a C or C++ program, as plain addresses, as
// memcheck reads them (a tagged pointer there kept its block reachable, where memcheck calls it
// lost, and a word that looked like a side table's kept its target alive):
//  - the top byte is spare (SWIFT_ABI_X86_64_SWIFT_SPARE_BITS_MASK = 0xFF00000000000007): enum
//    tags of multi-payload enums, String's discriminator nibble and immortal bit, bridge object
//    tag bits live there, so it is cleared before the lookup; the low three bits are spare too,
//    so a pointer within a block's first eight bytes counts as one to its start (which also
//    covers ICU's strings, whose pointer skips a 4-byte reference count);
//  - an object with a side table (it has weak references) keeps the side table's address in
//    its refcount word, word 1, shifted right by 3 with bits 62 and 63 set (RefCount.h): that
//    word is decoded and counts as a pointer to the side table;
//  - a side table (HeapObjectSideTableEntry) holds its object's address in its word 0: that is
//    what weak references reach the object through, so it does not keep the object alive.
#include <errno.h>
#include <malloc.h>
#include <string.h>

#include "leakscan.h"

#define HL_ADDR_MASK 0x00FFFFFFFFFFFFFFull
#define HL_SIDE_TABLE_BITS (3ull << 62)
#define HL_SIDE_TABLE_POINTER ((1ull << 62) - 1)

int hl_scan_begin(struct hl_scan *s) {
  memset(s, 0, sizeof *s);
  s->swift = hl_swift_present;
  s->addr_mask = s->swift ? HL_ADDR_MASK : ~0ull;
  s->start_mask = s->swift ? ~7ull : ~0ull;
  hl_vec_init(&s->frontier, sizeof(uint32_t));
  hl_vec_init(&s->edges, 1);
  hl_vec_init(&s->maps, sizeof(struct hl_mapping));
  hl_vec_init(&s->clipped, sizeof(uint32_t));
  hl_vec_init(&s->scanned, sizeof(struct hl_mapping));
  int err = hl_index_build(&s->ix);
  if (err) return err;
  s->state = hl_scan_map(s->ix.count ? s->ix.count : 1);
  // Each block enters the frontier once a phase at most: room for all, so that it never moves
  // while roots are scanned against a snapshot of the mappings.
  return s->state && hl_vec_reserve(&s->frontier, s->ix.count + 1) ? 0 : ENOMEM;
}

void hl_scan_end(struct hl_scan *s) {
  hl_graph_end(s);
  hl_unmap(s->state, s->ix.count ? s->ix.count : 1);
  hl_index_free(&s->ix);
  hl_vec_free(&s->frontier);
  hl_vec_free(&s->edges);
  hl_vec_free(&s->maps);
  hl_vec_free(&s->clipped);
  hl_vec_free(&s->scanned);
}

static inline void push(struct hl_scan *s, uint32_t j) {
  uint32_t *slot = hl_vec_push(&s->frontier);
  if (slot) *slot = j;
  // Out of memory for the frontier: the block stays marked but unscanned, so what only it
  // points to may be reported lost. mmap failing here means the machine is out of memory.
}

static void put_varint(struct hl_vec *v, uint64_t x) {  // with room for 10 bytes
  v->len += hl_encode_varint(v->data + v->len, x);
}

static uint64_t get_varint(const uint8_t *p, size_t *at) {
  uint64_t x = 0;
  for (unsigned shift = 0;; shift += 7) {
    uint8_t byte = p[(*at)++];
    x |= (uint64_t)(byte & 0x7F) << shift;
    if (!(byte & 0x80)) return x;
  }
}

static void add_edge(struct hl_scan *s, uint32_t to, int interior) {
  uint32_t flags = interior ? HL_EDGE_INTERIOR : 0;
  if (s->edge_count == 0 || s->from != s->last_from) s->recent_count = 0;
  // Many pointers from one block to another make one edge; look back a few edges for it.
  for (uint32_t i = 0; i < s->recent_count && i < 8; i++)
    if (s->recent[i].to == to && s->recent[i].flags == flags) return;
  if (!hl_vec_reserve(&s->edges, 20)) return;  // out of memory: the edge goes unrecorded
  int64_t distance = (int64_t)to - (int64_t)s->from;
  put_varint(&s->edges, s->edge_count ? s->from - s->last_from : s->from);
  put_varint(&s->edges, hl_zigzag(distance) << 1 | flags);
  s->recent[s->recent_count++ % 8] = (struct hl_edge){s->from, to, flags};
  s->last_from = s->from;
  s->edge_count++;
}

void hl_scan_edge_next(const struct hl_scan *s, size_t *at, struct hl_edge *edge) {
  edge->from += (uint32_t)get_varint(s->edges.data, at);
  uint64_t code = get_varint(s->edges.data, at);
  int64_t distance = (int64_t)((code >> 2) ^ -((code >> 1) & 1));
  edge->to = (uint32_t)((int64_t)edge->from + distance);
  edge->flags = (uint32_t)(code & HL_EDGE_INTERIOR);
}

// With --graph, who reached block j first, through the word at `at`.
static void reached(struct hl_scan *s, uint32_t j, const uint64_t *at) {
  struct hl_graph *g = s->graph;
  g->parent[j] = g->holder;
  g->offset[j] = (uintptr_t)at - g->base;
}

static inline void hit(struct hl_scan *s, uint32_t j, int interior, const uint64_t *at) {
  uint8_t *state = &s->state[j];
  switch (s->phase) {
  case 0:
    if (!interior && *state != HL_REACHED) {
      *state = HL_REACHED;
      if (s->graph) reached(s, j, at);
      push(s, j);
    } else if (interior && *state == HL_UNSEEN) {
      *state = HL_SEED;
    }
    break;
  case 1:
    if (*state == HL_UNSEEN || *state == HL_SEED) {
      *state = HL_POSSIBLE;
      push(s, j);
    }
    break;
  default:
    if (*state == HL_UNSEEN || *state == HL_POSSIBLE) add_edge(s, j, interior);
  }
}

// C++ `new T[n]` for a T with a destructor stores n in the block's first word and returns the
// block plus 8 (the Itanium ABI's array cookie): a pointer there holds the whole array. ICU,
// which Foundation uses, keeps arrays of UnicodeString so. Valgrind's `newarray` heuristic.
static int is_clipped(const struct hl_scan *s, uint32_t j);

static inline int is_array_cookie(const struct hl_scan *s, uint32_t j, uint64_t p) {
  const struct hl_sblock *b = &s->ix.blocks[j];
  uint64_t size = hl_sblock_end(b) - hl_sblock_addr(b), n;
  if (p != hl_sblock_addr(b) + 8 || size < 16 || (s->clipped.len && is_clipped(s, j))) return 0;
  n = *(const uint64_t *)(uintptr_t)hl_sblock_addr(b);
  return n >= 1 && n <= size - 8 && (size - 8) % n == 0;
}

// Whether `addr` may be a vtable's: aligned, past the first page, in a read-only part of a
// mapped file (.data.rel.ro, once the loader has made it read-only).
static int is_vtable_address(const struct hl_scan *s, uint64_t addr) {
  if ((addr & 7) || addr < 4096) return 0;
  const struct hl_mapping *m = hl_maps_find(&s->maps, (uintptr_t)addr);
  return m && (m->flags & (HL_MAP_R | HL_MAP_W | HL_MAP_FILE)) == (HL_MAP_R | HL_MAP_FILE);
}

// memcheck's other heuristics for a pointer into a block's middle that is the block's own
// (its --leak-check-heuristics, all on by default), so that a C++ program's verdicts are its:
//   length64             a 64-bit length in word 0, the block's size less 8, and p past it;
//   stdstring            libstdc++'s old string: length and capacity, then p at the chars;
//   multipleinheritance  p at a base's vtable pointer, word 0 the object's vtable pointer (a
//                        C++ object held through its second base: possibly lost, where memcheck
//                        calls it reachable).
static int is_own_inner_pointer(const struct hl_scan *s, uint32_t j, uint64_t p) {
  const struct hl_sblock *b = &s->ix.blocks[j];
  uint64_t start = hl_sblock_addr(b), size = hl_sblock_end(b) - start;
  if (size < 16 || (s->clipped.len && is_clipped(s, j))) return 0;
  const uint64_t *w = (const uint64_t *)(uintptr_t)start;
  if (p == start + 8 && w[0] > 0 && w[0] == size - 8) return 1;
  if (p == start + 24 && size >= 25 && w[0] <= w[1] && 24 + w[1] + 1 == size) return 1;
  return !(p & 7) && p + 8 <= start + size && is_vtable_address(s, *(const uint64_t *)p) &&
         is_vtable_address(s, w[0]);
}

// The block a word points into, or -1; *interior is set when it points past the first word.
static inline int64_t target(const struct hl_scan *s, uint64_t word, int *interior) {
  uint64_t p = word & s->addr_mask;
  if (p - s->ix.lo >= s->ix.hi - s->ix.lo) return -1;
  int64_t j = hl_index_lookup(&s->ix, p, interior);
  if (j >= 0 && *interior) {
    const struct hl_sblock *b = &s->ix.blocks[j];
    if ((p & s->start_mask) == hl_sblock_addr(b) || is_array_cookie(s, (uint32_t)j, p) ||
        is_own_inner_pointer(s, (uint32_t)j, p))
      *interior = 0;
  }
  return j;
}

static void scan_words(struct hl_scan *s, const uint64_t *w, const uint64_t *end) {
  for (; w < end; w++) {
    int interior;
    int64_t j = target(s, *w, &interior);
    if (j >= 0) hit(s, (uint32_t)j, interior, w);
  }
}

// A side table's word 0 names its object, whose word 1 names the side table back.
static int is_side_table_back_pointer(const struct hl_scan *s, uint64_t side, int64_t object) {
  const struct hl_sblock *o = &s->ix.blocks[object];
  if (!s->swift || o->size < 16 || (s->clipped.len && is_clipped(s, (uint32_t)object))) return 0;
  uint64_t refcount = ((const uint64_t *)(uintptr_t)hl_sblock_addr(o))[1];
  return (refcount & HL_SIDE_TABLE_BITS) == HL_SIDE_TABLE_BITS &&
         (refcount & HL_SIDE_TABLE_POINTER) << 3 == side;
}

// Whether block `j` holds pages the program made unreadable (hl_scan_skip_unmapped).
static int is_clipped(const struct hl_scan *s, uint32_t j) {
  const uint32_t *c = (const uint32_t *)s->clipped.data;
  size_t lo = 0, hi = s->clipped.len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (c[mid] < j) lo = mid + 1;
    else hi = mid;
  }
  return lo < s->clipped.len && c[lo] == j;
}

// A block with pages the program made unreadable (mprotect): its readable parts are scanned.
static void scan_clipped(struct hl_scan *s, uintptr_t lo, uintptr_t hi) {
  const struct hl_mapping *m = s->maps.len ? hl_maps_find(&s->maps, lo) : NULL;
  const struct hl_mapping *last = (const struct hl_mapping *)s->maps.data + s->maps.len;
  if (!s->maps.len) return;
  if (!m) {  // lo lies in a hole: start at the next mapping
    m = (const struct hl_mapping *)s->maps.data;
    while (m < last && m->hi <= lo) m++;
  }
  for (; m < last && m->lo < hi; m++) {
    if (!(m->flags & HL_MAP_R)) continue;
    uintptr_t a = lo > m->lo ? lo : m->lo, b = hi < m->hi ? hi : m->hi;
    scan_words(s, (const uint64_t *)a, (const uint64_t *)b);
  }
}

// A block's contents run to the end of what malloc gave, not of what was asked for: Swift's
// array storage asks malloc_usable_size and keeps elements in the rest (an Array of 7 Arrays
// asks for 80 bytes, gets 88, and keeps its 7th element in bytes 80 to 87). Every block in the
// index is a live glibc chunk, held so by the live table's locks, so its header can be read,
// unless the program made its page unreadable: a clipped block's goes through the kernel.
static void scan_block(struct hl_scan *s, uint32_t j) {
  const struct hl_sblock *b = &s->ix.blocks[j];
  const uint64_t *w = (const uint64_t *)(uintptr_t)hl_sblock_addr(b);
  uint64_t last = hl_sblock_end(b);
  if (s->clipped.len && is_clipped(s, j)) {
    uint64_t header = 0, usable = 0;
    if (hl_safe_read((uintptr_t)w - 8, &header, sizeof header))
      usable = (uintptr_t)w + hl_usable_from_header(header);
    scan_clipped(s, (uintptr_t)w, (uintptr_t)((usable > last ? usable : last) + 7) & ~7ull);
    return;
  }
  uint64_t usable = (uintptr_t)w + malloc_usable_size((void *)(uintptr_t)w);
  const uint64_t *end =
      (const uint64_t *)(uintptr_t)(((usable > last ? usable : last) + 7) & ~7ull);
  if (w < end) {
    int interior;
    int64_t t = target(s, w[0], &interior);
    if (t >= 0 && !(!interior && is_side_table_back_pointer(s, hl_sblock_addr(b), t)))
      hit(s, (uint32_t)t, interior, w);
  }
  if (w + 1 < end) {
    if (s->swift && (w[1] & HL_SIDE_TABLE_BITS) == HL_SIDE_TABLE_BITS) {
      int interior;
      int64_t t = hl_index_lookup(&s->ix, (w[1] & HL_SIDE_TABLE_POINTER) << 3, &interior);
      if (t >= 0 && !interior) hit(s, (uint32_t)t, 0, w + 1);
    } else {
      scan_words(s, w + 1, w + 2);
    }
  }
  if (w + 2 >= end) return;
  if (end - w >= 8192) scan_clipped(s, (uintptr_t)(w + 2), (uintptr_t)end);  // 64 KiB and up
  else scan_words(s, w + 2, end);
}

static void flood(struct hl_scan *s) {
  if (s->graph && s->phase == 0) return;  // breadth first, once every root is in
  while (s->frontier.len) {
    uint32_t j = ((const uint32_t *)s->frontier.data)[--s->frontier.len];
    scan_block(s, j);
  }
}

// The frontier as a queue: every root's blocks are in it, so each block is reached first on a
// shortest path. Each block enters it once at most (it is marked before it is pushed), and it
// has room for all, so it never moves. The order reached is kept, for hl_graph_collect.
static void flood_breadth_first(struct hl_scan *s) {
  for (size_t head = 0; head < s->frontier.len; head++) {
    uint32_t j = ((const uint32_t *)s->frontier.data)[head];
    s->graph->holder = j;
    s->graph->base = (uintptr_t)hl_sblock_addr(&s->ix.blocks[j]);
    scan_block(s, j);
  }
  memcpy(s->graph->order, s->frontier.data, s->frontier.len * sizeof(uint32_t));
  s->graph->reached = (uint32_t)s->frontier.len;
  s->frontier.len = 0;
}

// Blocks that begin where nothing is mapped are stale entries of the live table (a free it did
// not see, after which the heap shrank or the chunk's mapping went): not scanned, not reported.
// A block with pages the program made unreadable (mprotect, a guard page), its first among
// them, is the program's: it is scanned where it can be read (scan_clipped), and reported if
// lost. Such blocks were taken for stale: what only they pointed to was called lost, they were
// never reported themselves, as memcheck reports them, and a pointer to the word after a
// guarded first page (an array cookie's shape) crashed the scan, which read the block's first
// word. Blocks and mappings are both in address order, so one merge pass finds them.
uint32_t hl_scan_skip_unmapped(struct hl_scan *s) {
  const struct hl_mapping *m = (const struct hl_mapping *)s->maps.data;
  const struct hl_mapping *last = m + s->maps.len;
  uint32_t skipped = 0;
  for (uint32_t j = 0; j < s->ix.count; j++) {
    const struct hl_sblock *b = &s->ix.blocks[j];
    while (m < last && m->hi <= hl_sblock_addr(b)) m++;
    // Readable mappings that follow each other may hold one block between them.
    const struct hl_mapping *n = m;
    uintptr_t covered = hl_sblock_addr(b);
    uint64_t end = hl_sblock_end(b);
    while (n < last && n->lo <= covered && (n->flags & HL_MAP_R) && covered < end)
      covered = n++->hi;
    if (covered == hl_sblock_addr(b) && !(n < last && n->lo <= covered)) {
      s->state[j] = HL_REACHED;
      skipped++;
    } else if (covered < end) {
      uint32_t *slot = hl_vec_push(&s->clipped);
      if (slot) *slot = j;
      else s->state[j] = HL_REACHED;  // no memory to note it: not scanned, as before
    }
  }
  return skipped;
}

void hl_scan_root(struct hl_scan *s, uintptr_t lo, uintptr_t hi) {
  lo = (lo + 7) & ~(uintptr_t)7;
  hi &= ~(uintptr_t)7;
  if (lo >= hi) return;
  s->root_bytes += hi - lo;
  struct hl_mapping *r = s->record ? hl_vec_push(&s->scanned) : NULL;
  if (r) *r = (struct hl_mapping){lo, hi, 0};
  if (s->graph) hl_graph_root(s, lo, hi, 0);
  scan_clipped(s, lo, hi);
  flood(s);  // now, so that the frontier stays small
}

// A stopped thread's registers: a pointer into a block there holds it, as one at its start
// would. Code between an allocation and its first store keeps only such a pointer (a Swift
// initializer writes its fields through object + 16), and a scan that stops it there must not
// call the block possibly lost.
void hl_scan_registers(struct hl_scan *s, const uint64_t *regs, size_t count) {
  s->root_bytes += count * 8;
  struct hl_mapping *r = s->record ? hl_vec_push(&s->scanned) : NULL;
  if (r) *r = (struct hl_mapping){(uintptr_t)regs, (uintptr_t)(regs + count), 0};
  if (s->graph) hl_graph_root(s, (uintptr_t)regs, (uintptr_t)(regs + count), 0);
  for (size_t i = 0; i < count; i++) {
    int interior;
    int64_t j = target(s, regs[i], &interior);
    if (j >= 0) hit(s, (uint32_t)j, 0, regs + i);
  }
  flood(s);
}

// A root region that may have been unmapped since the maps were read (the scan's own memory
// comes and goes meanwhile): read through the kernel, which skips what is gone, into a buffer
// in the shim's data. Scans hold hl_scan_lock, so one buffer serves.
void hl_scan_root_copied(struct hl_scan *s, uintptr_t lo, uintptr_t hi) {
  static uint64_t buffer[8192];
  lo = (lo + 7) & ~(uintptr_t)7;
  hi &= ~(uintptr_t)7;
  struct hl_mapping *r = lo < hi && s->record ? hl_vec_push(&s->scanned) : NULL;
  if (r) *r = (struct hl_mapping){lo, hi, 0};
  while (lo < hi) {
    size_t n = hi - lo < sizeof buffer ? hi - lo : sizeof buffer;
    if (!hl_safe_read(lo, buffer, n)) {  // some of it is gone: a page at a time
      n = 4096 - (lo & 4095) < n ? 4096 - (lo & 4095) : n;
      if (!hl_safe_read(lo, buffer, n)) {
        lo += n;
        continue;
      }
    }
    s->root_bytes += n;
    if (s->graph) hl_graph_root(s, lo, lo + n, (uintptr_t)buffer - lo);
    scan_words(s, buffer, buffer + n / 8);
    memset(buffer, 0, n);  // linked into a program, the shim's data is the program's: a root
    flood(s);
    lo += n;
  }
}

void hl_scan_mark_root_block(struct hl_scan *s, int64_t j) {
  if (j < 0 || s->state[j] == HL_REACHED) return;
  s->state[j] = HL_REACHED;
  if (s->graph) {
    const struct hl_sblock *b = &s->ix.blocks[j];
    hl_graph_root(s, hl_sblock_addr(b), hl_sblock_end(b), 0);
    reached(s, (uint32_t)j, (const uint64_t *)(uintptr_t)hl_sblock_addr(b));
  }
  push(s, (uint32_t)j);
  flood(s);
}

void hl_scan_finish(struct hl_scan *s) {
  if (s->graph) flood_breadth_first(s);
  else flood(s);
  s->phase = 1;
  for (uint32_t j = 0; j < s->ix.count; j++)
    if (s->state[j] == HL_SEED) {
      s->state[j] = HL_POSSIBLE;
      push(s, j);
    }
  flood(s);
  s->phase = 2;
  for (uint32_t j = 0; j < s->ix.count; j++)
    if (s->state[j] == HL_UNSEEN || s->state[j] == HL_POSSIBLE) {
      s->from = j;
      scan_block(s, j);
    }
}
