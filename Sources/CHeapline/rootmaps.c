// The program's own mappings as roots, as memcheck takes them: every writable private mapping,
// anonymous or a file's private copy, holds whatever the program put there. CPython's pymalloc
// keeps its objects, and their pointers to malloc blocks, in 256 KiB anonymous arenas; programs
// keep structures in memory they map themselves. Left out:
//  - malloc's heaps, whose free chunks hold stale pointers: they are scanned only through
//    reachable blocks (and heapwalk.c's untracked chunks); but what the program took with sbrk
//    itself, past the main heap's top chunk, is its own;
//  - the shim's own memory (the registry in osmem.c): its tables hold every block's address;
//  - the blocks of the live table that glibc mapped whole (128 KiB and up): blocks, not roots;
//    they are cut out of the mapping, which the kernel may have merged with its neighbours;
//  - modules' segments, stacks and everything else that roots.c scanned in its own way, and the
//    stacks' dead frames below their stack pointers;
//  - shared mappings (a device's memory may not be read safely) and the kernel's ([vvar]).
// A piece of a mapping that holds a block of the live table that is not a mapped chunk is a
// heap that hl_heap_ranges did not find: it is left out too, never scanned with its free chunks.
#include <string.h>

#include "leakscan.h"

enum { HL_OWN_MAX = 8192 };

static void push_range(struct hl_vec *v, uintptr_t lo, uintptr_t hi) {
  struct hl_mapping *r = lo < hi ? hl_vec_push(v) : NULL;
  if (r) *r = (struct hl_mapping){lo, hi, 0};
}

static void sort_ranges(struct hl_mapping *a, size_t n) {  // heapsort by start: no memory
  for (size_t start = n / 2, end = n;;) {
    size_t root;
    if (start > 0) {
      root = --start;
    } else if (end > 1) {
      struct hl_mapping t = a[0];
      a[0] = a[--end];
      a[end] = t;
      root = 0;
    } else {
      return;
    }
    for (size_t child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && a[child].lo < a[child + 1].lo) child++;
      if (a[root].lo >= a[child].lo) break;
      struct hl_mapping t = a[root];
      a[root] = a[child];
      a[child] = t;
    }
  }
}

// Sorts and merges the ranges in place, so that they are disjoint and in address order.
static void normalize(struct hl_vec *v) {
  struct hl_mapping *r = (struct hl_mapping *)v->data;
  if (!v->len) return;
  sort_ranges(r, v->len);
  size_t k = 0;
  for (size_t i = 1; i < v->len; i++) {
    if (r[i].lo <= r[k].hi) {
      if (r[i].hi > r[k].hi) r[k].hi = r[i].hi;
    } else {
      r[++k] = r[i];
    }
  }
  v->len = k + 1;
}

// The first block that ends after `addr`.
static uint32_t first_block_after(const struct hl_index *ix, uintptr_t addr) {
  uint32_t lo = 0, hi = ix->count;
  while (lo < hi) {
    uint32_t mid = lo + (hi - lo) / 2;
    if (hl_sblock_end(&ix->blocks[mid]) <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

// Whether the blocks in [lo, hi) are all mapped chunks (IS_MMAPPED in their size word).
static int only_mapped_chunks(const struct hl_scan *s, uint32_t j, uintptr_t lo, uintptr_t hi) {
  for (; j < s->ix.count && hl_sblock_addr(&s->ix.blocks[j]) < hi; j++) {
    uint64_t header[2];
    uintptr_t chunk = (uintptr_t)hl_sblock_addr(&s->ix.blocks[j]) - 16;
    if (chunk < lo || !hl_safe_read(chunk, header, sizeof header) || (header[1] & 7) != 2)
      return 0;
  }
  return 1;
}

// A piece of a mapping, less the blocks in it (each a whole mapped chunk, header to end). The
// maps were read before the scan's own vectors last grew or went: what they name may be gone.
static void scan_piece(struct hl_scan *s, uintptr_t lo, uintptr_t hi) {
  uint32_t first = first_block_after(&s->ix, lo);
  if (!only_mapped_chunks(s, first, lo, hi)) return;  // a heap: none of it is a root
  uintptr_t at = lo;
  for (uint32_t j = first; j < s->ix.count && hl_sblock_addr(&s->ix.blocks[j]) < hi; j++) {
    const struct hl_sblock *b = &s->ix.blocks[j];
    const uint64_t *header = (const uint64_t *)(uintptr_t)(hl_sblock_addr(b) - 16);
    uintptr_t chunk = (uintptr_t)hl_sblock_addr(b) - 16;
    uintptr_t chunk_end = chunk + (header[1] & ~(uint64_t)7);
    if (chunk_end < hl_sblock_end(b)) chunk_end = (uintptr_t)hl_sblock_end(b);
    // memalign's chunks keep their offset from the start of their mapping in word 0.
    uintptr_t start = header[0] <= chunk - at ? chunk - (uintptr_t)header[0] : chunk;
    hl_scan_root_copied(s, at, start > at ? start : at);
    if (chunk_end > at) at = chunk_end;
  }
  hl_scan_root_copied(s, at, hi);
}

int hl_mapping_roots_scan(struct hl_scan *s, const struct hl_vec *extents,
                          const struct hl_vec *dead) {
  if (atomic_load(&hl_own_overflow)) return 0;
  struct hl_vec skip, own;
  hl_vec_init(&skip, sizeof(struct hl_mapping));
  hl_vec_init(&own, sizeof(uintptr_t[2]));
  // The registry is read once both have their memory, so that it lists them too.
  if (!hl_vec_reserve(&own, HL_OWN_MAX) ||
      !hl_vec_reserve(&skip, HL_OWN_MAX + extents->len + dead->len + s->scanned.len + 64)) {
    hl_vec_free(&own);
    hl_vec_free(&skip);
    return 0;
  }
  size_t owned = hl_own_ranges((uintptr_t(*)[2])own.data, HL_OWN_MAX);
  for (size_t i = 0; i < owned; i++) {
    const uintptr_t *r = (const uintptr_t *)own.data + 2 * i;
    push_range(&skip, r[0], r[1]);
  }
  hl_vec_free(&own);
  const struct hl_vec *lists[] = {extents, dead, &s->scanned};
  for (int l = 0; l < 3; l++)
    for (size_t i = 0; i < lists[l]->len; i++) {
      const struct hl_mapping *r = &HL_VEC_AT(lists[l], struct hl_mapping, i);
      push_range(&skip, r->lo, r->hi);
    }
  hl_heap_ranges(s, &skip);
  normalize(&skip);
  const struct hl_mapping *maps = (const struct hl_mapping *)s->maps.data;
  const struct hl_mapping *k = (const struct hl_mapping *)skip.data, *kend = k + skip.len;
  s->record = 0;  // roots scanned from here on are not recorded
  for (size_t i = 0; i < s->maps.len; i++) {
    const struct hl_mapping *m = &maps[i];
    if ((m->flags & (HL_MAP_R | HL_MAP_W)) != (HL_MAP_R | HL_MAP_W) ||
        (m->flags & (HL_MAP_SHARED | HL_MAP_SPECIAL | HL_MAP_STACK)))
      continue;
    if (m->flags & HL_MAP_HEAP) {  // glibc's, but for what the program took with sbrk past it
      uintptr_t end = hl_main_heap_end(m->lo, m->hi);
      if (end < m->hi) scan_piece(s, end, m->hi);
      continue;
    }
    uintptr_t at = m->lo;
    while (k < kend && k->hi <= at) k++;
    for (const struct hl_mapping *e = k; at < m->hi; e++) {
      uintptr_t until = e < kend && e->lo < m->hi ? e->lo : m->hi;
      if (until > at) scan_piece(s, at, until);
      if (e >= kend || e->lo >= m->hi) break;
      if (e->hi > at) at = e->hi;
    }
  }
  hl_vec_free(&skip);
  return 1;
}
