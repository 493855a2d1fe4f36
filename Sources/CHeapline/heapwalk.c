// Malloc chunks that the live table does not know are roots: the recording cannot judge what
// it did not see allocated (blocks from before an in-process recording started, or made by the
// shim's own thread, which the Swift runtime allocates on while it names types), and they may
// hold the only pointer to a block it did see. Free chunks are not roots: their stale contents
// would hide leaks. So this walks glibc's heaps chunk by chunk (glibc 2.36's layout: malloc.c):
//  - the main arena is the [heap] mapping; chunks follow each other from its start, and a
//    chunk is in use when the next one's PREV_INUSE bit is set;
//  - other arenas' heaps are 64 MiB-aligned mappings that start with a heap_info
//    {arena, previous heap, size, ...}; an arena's first heap holds the arena after it;
//  - chunks of 128 KiB and up are mappings of their own, marked IS_MMAPPED (walked here only
//    when rootmaps.c could not scan the program's mappings: it scans them, chunks included);
//  - a chunk in a tcache or fastbin still looks in use: a tcache chunk holds the process's
//    tcache key in its word 1, and a fastbin or tcache chunk its next pointer, mangled with its
//    own address (PROTECT_PTR), in its word 0.
// A walk that meets an impossible size stops: the rest of that heap is not scanned.
#include <string.h>

#include "leakscan.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);

enum { HL_HEAP_MAX = 64 << 20, HL_MALLOC_STATE = 2200, HL_FASTBIN_MAX = 0x80 };
static uint64_t hl_tcache_key;

// glibc 2.34 and later keep one random key in every chunk a tcache holds: free two chunks and
// read it back from both. Under a mmap threshold this small (MALLOC_MMAP_THRESHOLD_=0), each
// is a mapping of its own, which free unmaps: there is no tcache to learn, and no reading them.
void hl_heapwalk_init(void) {
  if (hl_tcache_key) return;
  void *a = __libc_malloc(24), *b = __libc_malloc(24);
  int mapped = !a || !b || hl_chunk_is_mapped(hl_chunk_header(a)) ||
               hl_chunk_is_mapped(hl_chunk_header(b));
  __libc_free(a);
  __libc_free(b);
  if (mapped) return;
  uint64_t ka = ((volatile uint64_t *)a)[1], kb = ((volatile uint64_t *)b)[1];
  if (ka == kb && ka > 0xFFFF) hl_tcache_key = ka;
}

// A heap's words as the kernel reads them now, a window at a time, never by direct loads: a
// thread the stop did not reach may have unmapped what the maps showed. One that is exiting has
// every signal blocked, and gives its tcache back to its arena, which can trim a heap or delete
// it. Scans hold hl_scan_lock, so one window serves; each walk starts with it empty.
enum { HL_WINDOW_WORDS = 32768 };  // 256 KiB of the shim's data, touched only by scans
static struct {
  uintptr_t lo, hi, used;  // used: how much of `words` was ever filled
  uint64_t words[HL_WINDOW_WORDS];
} hl_window;

// Linked into a program, the shim's data is the program's, a root: the copies must not stay.
static void window_forget(void) {
  memset(hl_window.words, 0, hl_window.used);
  hl_window.lo = hl_window.hi = hl_window.used = 0;
}

// The word at `addr` (8-aligned, below `end`), or 0 when the kernel cannot read it now.
static int word_at(uintptr_t addr, uintptr_t end, uint64_t *out) {
  if (addr < hl_window.lo || addr + 8 > hl_window.hi) {
    if (addr + 8 > end) return 0;
    uintptr_t n = (end - addr) & ~(uintptr_t)7;
    if (n > sizeof hl_window.words) n = sizeof hl_window.words;
    if (!hl_safe_read(addr, hl_window.words, n)) {  // part of it is gone: to the page's end
      uintptr_t page = 4096 - (addr & 4095);
      n = page < n ? page : n;
      if (!hl_safe_read(addr, hl_window.words, n)) return 0;
    }
    hl_window.lo = addr;
    hl_window.hi = addr + n;
    if (n > hl_window.used) hl_window.used = n;
  }
  memcpy(out, (const char *)hl_window.words + (addr - hl_window.lo), sizeof *out);
  return 1;
}

// A chunk's size field, or 0 (an impossible size, which stops a walk) when it cannot be read.
static uint64_t size_at(uintptr_t c, uintptr_t end) {
  uint64_t w;
  return word_at(c + 8, end, &w) ? w : 0;
}

static int tracked(const struct hl_scan *s, uintptr_t user) {
  int interior;
  return hl_index_lookup(&s->ix, user, &interior) >= 0;
}

static int looks_free(uintptr_t user, uint64_t chunk_size, uintptr_t lo, uintptr_t hi) {
  uint64_t w[2];
  if (!word_at(user, hi, &w[0]) || !word_at(user + 8, hi, &w[1])) return 1;  // gone: not a root
  if (hl_tcache_key && w[1] == hl_tcache_key) return 1;
  if (chunk_size > HL_FASTBIN_MAX) return 0;
  uint64_t next = w[0] ^ (user >> 12);
  return next == 0 || ((next & 15) == 0 && next >= lo && next < hi);
}

// Whether chunks from `c` follow each other to exactly `end`.
static int chain_fits(uintptr_t c, uintptr_t end) {
  for (unsigned n = 0; c < end && n < 64; n++) {
    uint64_t size = size_at(c, end) & ~7ull;
    if (size < 32 || (size & 15) || c + size > end) return 0;
    c += size;
  }
  return 1;  // a heap of more than 64 chunks that started right is taken as right
}

// The words come through the window, and the untracked blocks scanned as roots are copies: a
// heap that shrank since the maps were read ends the walk where it became unreadable.
static void walk(struct hl_scan *s, uintptr_t heap, uintptr_t c, uintptr_t end) {
  while (c + 32 <= end) {
    uint64_t size = size_at(c, end) & ~7ull;
    if (size < 32 || (size & 15) || c + size > end) return;
    uintptr_t next = c + size;
    if (next + 16 > end) return;  // the top chunk, which is free
    uintptr_t user = c + 16;
    if ((size_at(next, end) & 1) && !tracked(s, user) && !looks_free(user, size, heap, end))
      hl_scan_root_copied(s, user, next + 8);  // in use, a chunk owns the next one's first word
    c = next;
  }
}

// A non-main arena's heap: where its first chunk is, found by the layout, then checked.
static void walk_arena_heap(struct hl_scan *s, uintptr_t lo, uintptr_t mapped_hi) {
  uint64_t h[3];  // read safely: any mapping may be 64 MiB-aligned, the scan's own included
  if (!hl_safe_read(lo, h, sizeof h)) return;
  uint64_t arena = h[0], previous = h[1], size = h[2];
  if (size < 4096 || size > HL_HEAP_MAX || lo + size > mapped_hi) return;
  uintptr_t end = lo + size, first = 0;
  if (!previous && arena > lo && arena < lo + 256) {
    uintptr_t guess = (arena + HL_MALLOC_STATE + 15) & ~(uintptr_t)15;
    if (chain_fits(guess, end)) first = guess;
  } else if (previous && chain_fits(lo + 48, end)) {
    first = lo + 48;
  }
  for (uintptr_t c = lo + 32; !first && c < lo + 4096 && c < end; c += 16)
    if (chain_fits(c, end)) first = c;
  if (first) walk(s, lo, first, end);
}

static void walk_mmapped(struct hl_scan *s, uintptr_t c, uintptr_t hi) {
  while (c + 32 <= hi) {
    uint64_t w[2];
    if (!hl_safe_read(c, w, sizeof w)) return;
    uint64_t size = w[1] & ~7ull;
    if (w[0] != 0 || (w[1] & 7) != 2 || size < 4096 || (size & 4095) || c + size > hi) return;
    if (!tracked(s, c + 16)) hl_scan_root_copied(s, c + 16, c + size);
    c += size;
  }
}

static int holds_a_stack(const struct hl_world *w, const struct hl_mapping *m) {
  for (uint32_t u = 0; u < w->used_count; u++) {
    const struct hl_thread_state *t = &w->threads[w->used[u]];
    if (t->sp >= m->lo && t->sp < m->hi) return 1;
  }
  return (m->flags & HL_MAP_STACK) || (w->self_sp >= m->lo && w->self_sp < m->hi);
}

// glibc keeps its main arena (a struct malloc_state) in libc's data, a root. Its fastbins, top,
// last remainder and bins point at chunk headers, and a chunk's header is the last word of the
// block before it: interior pointers that would make the block before every free chunk (a
// leaked one too) look possibly reachable. So that part of the arena is not scanned. The arena
// is not an exported symbol: it is found by its layout (glibc 2.36, 2200 bytes): ints mutex,
// flags, have_fastchunks at 0; 10 fastbins at 16; top at 96; last remainder at 104; 127 bin
// pairs at 112, an empty one pointing to itself less 16; the binmap at 2144; next at 2160 (the
// arena itself, or an arena 48 bytes into a 64 MiB-aligned heap); attached threads at 2176;
// system_mem and max_system_mem at 2184.
enum { HL_ARENA_TOP = 96, HL_ARENA_BINS = 112, HL_ARENA_BINMAP = 2144, HL_ARENA_NEXT = 2160 };

static int looks_like_main_arena(uintptr_t a) {
  const uint64_t *w = (const uint64_t *)a;
  const uint32_t *ints = (const uint32_t *)a;
  uint64_t next = w[HL_ARENA_NEXT / 8];
  if (next != a && (next & (HL_HEAP_MAX - 1)) != 48) return 0;
  if (ints[0] > 2 || ints[1] > 15 || ints[2] > 1 || !w[HL_ARENA_TOP / 8]) return 0;
  uint64_t system = w[2184 / 8], max_system = w[2192 / 8];
  if ((system & 4095) || system > max_system) return 0;
  unsigned empty = 0;
  for (uintptr_t bin = a + HL_ARENA_BINS; bin < a + HL_ARENA_BINMAP; bin += 16) {
    const uint64_t *pair = (const uint64_t *)bin;
    if (pair[0] == bin - 16 && pair[1] == bin - 16) empty++;
    else if (!pair[0] || !pair[1]) return 0;
  }
  return empty >= 8;
}

// The chunk pointers of the main arena, if it lies in [lo, hi): found once, then remembered
// (libc's data does not move). With the world stopped, so that no bin changes under the test.
static uintptr_t arena;  // the main arena, once found

int hl_main_arena_chunk_pointers(uintptr_t lo, uintptr_t hi, uintptr_t *from, uintptr_t *to) {
  if (!(arena >= lo && arena + HL_MALLOC_STATE <= hi)) {
    arena = 0;
    for (uintptr_t a = (lo + 7) & ~(uintptr_t)7; !arena && a + HL_MALLOC_STATE <= hi; a += 8)
      if (looks_like_main_arena(a)) arena = a;
  }
  if (!arena) return 0;
  *from = arena + 16;  // the fastbins, top, last remainder and bins
  *to = arena + HL_ARENA_BINMAP;
  return 1;
}

// Where glibc's main heap ends in the piece [lo, hi) of the [heap] mapping that holds its top
// chunk: at that chunk's end. Past it lies memory that the program took with sbrk itself, which
// holds whatever the program put there, a root (as memcheck takes it). `hi` when the arena is
// not known, or its top is not in the piece (glibc keeps its end page-aligned, so nothing of its
// own lies past the top).
uintptr_t hl_main_heap_end(uintptr_t lo, uintptr_t hi) {
  uint64_t top = 0, size = 0;
  if (!arena || !hl_safe_read(arena + HL_ARENA_TOP, &top, sizeof top) || top < lo || top >= hi ||
      !hl_safe_read(top + 8, &size, sizeof size))
    return hi;
  size &= ~7ull;
  return size >= 16 && size <= hi - top ? top + size : hi;
}

static void add_range(struct hl_vec *out, uintptr_t lo, uintptr_t hi) {
  struct hl_mapping *r = hl_vec_push(out);
  if (r) *r = (struct hl_mapping){lo, hi, HL_MAP_HEAP};
}

// A heap_info at a 64 MiB-aligned address: {arena, previous heap, size, mprotect size}. An
// arena's first heap holds the arena 48 bytes in; a later heap points to the one before it.
static int looks_like_heap(uintptr_t h, uintptr_t *arena_of) {
  uint64_t info[4];
  if (!hl_safe_read(h, info, sizeof info)) return 0;
  uint64_t ar = info[0], previous = info[1], size = info[2], protected = info[3];
  if (size < 4096 || size > HL_HEAP_MAX || protected < size || protected > HL_HEAP_MAX) return 0;
  if ((ar & (HL_HEAP_MAX - 1)) != 48) return 0;
  if (previous ? (previous & (HL_HEAP_MAX - 1)) != 0 : ar != h + 48) return 0;
  *arena_of = ar;
  return 1;
}

void hl_heap_ranges(const struct hl_scan *s, struct hl_vec *out) {
  const struct hl_mapping *maps = (const struct hl_mapping *)s->maps.data;
  uintptr_t owner;
  for (size_t i = 0; i < s->maps.len; i++) {
    const struct hl_mapping *m = &maps[i];
    if (m->flags & HL_MAP_HEAP) add_range(out, m->lo, m->hi);
    if ((m->flags & (HL_MAP_R | HL_MAP_W | HL_MAP_FILE)) != (HL_MAP_R | HL_MAP_W)) continue;
    // Kernel-merged neighbours may hide a heap's start inside a mapping: try each boundary.
    for (uintptr_t h = (m->lo + HL_HEAP_MAX - 1) & ~(uintptr_t)(HL_HEAP_MAX - 1); h < m->hi;
         h += HL_HEAP_MAX)
      if (looks_like_heap(h, &owner)) add_range(out, h, h + HL_HEAP_MAX);
  }
  // The arena list: each arena's current heap holds its top chunk; earlier heaps chain back.
  uint64_t next = 0;
  if (!arena || !hl_safe_read(arena + HL_ARENA_NEXT, &next, sizeof next)) return;
  for (unsigned n = 0; next && next != arena && n < 4096; n++) {
    uint64_t top = 0;
    if (!hl_safe_read(next + HL_ARENA_TOP, &top, sizeof top)) return;
    uintptr_t h = top & ~(uintptr_t)(HL_HEAP_MAX - 1);
    for (unsigned k = 0; h && k < 4096 && looks_like_heap(h, &owner) && owner == next; k++) {
      add_range(out, h, h + HL_HEAP_MAX);
      uint64_t previous;
      if (!hl_safe_read(h + 8, &previous, sizeof previous)) break;
      h = previous;
    }
    if (!hl_safe_read(next + HL_ARENA_NEXT, &next, sizeof next)) return;
  }
}

void hl_heapwalk_scan(struct hl_scan *s, const struct hl_world *w, int mapped_chunks) {
  const struct hl_mapping *maps = (const struct hl_mapping *)s->maps.data;
  for (size_t i = 0; i < s->maps.len; i++) {
    const struct hl_mapping *m = &maps[i];
    if ((m->flags & (HL_MAP_R | HL_MAP_W)) != (HL_MAP_R | HL_MAP_W) || (m->flags & HL_MAP_FILE))
      continue;
    if (m->flags & HL_MAP_HEAP) {
      uintptr_t hi = m->hi;
      while (i + 1 < s->maps.len && maps[i + 1].lo == hi && (maps[i + 1].flags & HL_MAP_HEAP))
        hi = maps[++i].hi;
      uintptr_t first = m->lo;  // the break starts page-aligned, so the first chunk is there
      while (first < m->lo + 4096 && !chain_fits(first, hi)) first += 16;
      walk(s, m->lo, first, hi);
      continue;
    }
    // Every 64 MiB boundary, not only the mapping's start: the kernel merges a heap with the
    // mapping below when their kinds match (glibc puts an arena's next heap just after the one
    // that filled up, and a full heap is one mapping, read-write to its end).
    int heaps = 0;
    uintptr_t owner;
    for (uintptr_t h = (m->lo + HL_HEAP_MAX - 1) & ~(uintptr_t)(HL_HEAP_MAX - 1); h < m->hi;
         h += HL_HEAP_MAX)
      if (looks_like_heap(h, &owner)) {
        walk_arena_heap(s, h, m->hi);
        heaps++;
      }
    if (!heaps && mapped_chunks && !holds_a_stack(w, m)) walk_mmapped(s, m->lo, m->hi);
  }
  window_forget();
}
