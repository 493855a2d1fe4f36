// The leak scan's view of the live table: every block, sorted by address, with a directory that
// finds the block holding any address in a few steps. Built by a counting sort on 1 KiB buckets
// of 1 MiB regions (the directory is the sort's prefix sums), then an insertion sort of each
// bucket, which holds a few blocks at most since blocks do not overlap.
#include <errno.h>
#include <string.h>

#include "leakscan.h"

static uint32_t slot_of(const struct hl_index *ix, uint64_t region) {
  return (uint32_t)((region * 0x9E3779B97F4A7C15ull) >> ix->shift);
}

static int64_t find_region(const struct hl_index *ix, uint64_t region) {
  const uint64_t *keys = (const uint64_t *)ix->keys.data;
  uint32_t mask = (uint32_t)ix->keys.len - 1;
  for (uint32_t i = slot_of(ix, region);; i = (i + 1) & mask) {
    if (keys[i] == region + 1) return HL_VEC_AT(&ix->ordinal, uint32_t, i);
    if (!keys[i]) return -1;
  }
}

static int rehash(struct hl_index *ix, size_t slots) {
  struct hl_vec keys, ordinal;
  hl_vec_init(&keys, sizeof(uint64_t));
  hl_vec_init(&ordinal, sizeof(uint32_t));
  if (!hl_vec_reserve(&keys, slots) || !hl_vec_reserve(&ordinal, slots)) return 0;
  keys.len = ordinal.len = slots;
  memset(keys.data, 0, slots * sizeof(uint64_t));
  struct hl_index next = *ix;
  next.keys = keys;
  next.ordinal = ordinal;
  next.shift = 64 - (uint32_t)__builtin_ctzll(slots);
  for (size_t i = 0; i < ix->keys.len; i++) {
    uint64_t key = HL_VEC_AT(&ix->keys, uint64_t, i);
    if (!key) continue;
    uint32_t j = slot_of(&next, key - 1);
    while (HL_VEC_AT(&keys, uint64_t, j)) j = (j + 1) & (uint32_t)(slots - 1);
    HL_VEC_AT(&keys, uint64_t, j) = key;
    HL_VEC_AT(&ordinal, uint32_t, j) = HL_VEC_AT(&ix->ordinal, uint32_t, i);
  }
  hl_vec_free(&ix->keys);
  hl_vec_free(&ix->ordinal);
  *ix = next;
  return 1;
}

// The region's directory ordinal, adding the region (with zeroed counts) when it is new.
static int64_t add_region(struct hl_index *ix, uint64_t region) {
  int64_t found = find_region(ix, region);
  if (found >= 0) return found;
  if ((ix->regions + 1) * 2 > ix->keys.len && !rehash(ix, ix->keys.len * 2)) return -1;
  if (!hl_vec_reserve(&ix->dirs, HL_BUCKETS + 1)) return -1;
  memset(ix->dirs.data + ix->dirs.len * sizeof(uint32_t), 0, (HL_BUCKETS + 1) * sizeof(uint32_t));
  ix->dirs.len += HL_BUCKETS + 1;
  uint32_t mask = (uint32_t)ix->keys.len - 1, i = slot_of(ix, region);
  while (HL_VEC_AT(&ix->keys, uint64_t, i)) i = (i + 1) & mask;
  HL_VEC_AT(&ix->keys, uint64_t, i) = region + 1;
  HL_VEC_AT(&ix->ordinal, uint32_t, i) = ix->regions;
  return ix->regions++;
}

static void sort_u64(uint64_t *a, size_t n) {  // heapsort: in place, no memory, n log n
  for (size_t start = n / 2; start-- > 0;)
    for (size_t root = start, child; (child = 2 * root + 1) < n; root = child) {
      if (child + 1 < n && a[child] < a[child + 1]) child++;
      if (a[root] >= a[child]) break;
      uint64_t t = a[root]; a[root] = a[child]; a[child] = t;
    }
  for (size_t end = n; end-- > 1;) {
    uint64_t t = a[0]; a[0] = a[end]; a[end] = t;
    for (size_t root = 0, child; (child = 2 * root + 1) < end; root = child) {
      if (child + 1 < end && a[child] < a[child + 1]) child++;
      if (a[root] >= a[child]) break;
      t = a[root]; a[root] = a[child]; a[child] = t;
    }
  }
}

// Two passes over the live table, which the scan holds still: the first counts the blocks of
// each bucket, the second puts each at its bucket's cursor. A copy of the table between them
// would cost 24 bytes a block more at the scan's peak.
struct hl_fill {
  struct hl_index *ix;
  uint32_t *cursor;  // NULL in the counting pass
  uint32_t k;
  int failed;
};

static void fill_one(const struct hl_block *blk, uint32_t ref, void *context) {
  struct hl_fill *c = context;
  struct hl_index *ix = c->ix;
  if (c->failed) return;
  uint64_t addr = blk->addr, size = blk->size ? blk->size : 1;
  if (addr >= HL_SBLOCK_ADDR_LIMIT) {
    c->failed = EOVERFLOW;
    return;
  }
  int64_t region = c->cursor ? find_region(ix, addr >> 20) : add_region(ix, addr >> 20);
  if (region < 0 || (c->cursor && c->k >= ix->count)) {  // the table changed: it cannot
    c->failed = ENOMEM;
    return;
  }
  uint32_t at = (uint32_t)(region * (HL_BUCKETS + 1) + ((addr >> 10) % HL_BUCKETS));
  c->k++;
  if (!c->cursor) {
    if (addr < ix->lo) ix->lo = addr;
    if (addr + size > ix->hi) ix->hi = addr + size;
    ix->live_bytes += blk->size;
    HL_VEC_AT(&ix->dirs, uint32_t, at)++;
    return;
  }
  ix->blocks[c->cursor[at]++] = (struct hl_sblock){
      (uint32_t)addr, (uint16_t)(addr >> 32), size < HL_SBLOCK_BIG ? (uint16_t)size : HL_SBLOCK_BIG,
      ref};
}

uint64_t hl_sblock_big_end(const struct hl_sblock *b) {
  struct hl_block blk;
  hl_live_block_at(b->ref, &blk);
  return hl_sblock_addr(b) + (blk.size ? blk.size : 1);
}

int hl_index_build(struct hl_index *ix) {
  memset(ix, 0, sizeof *ix);
  hl_vec_init(&ix->keys, sizeof(uint64_t));
  hl_vec_init(&ix->ordinal, sizeof(uint32_t));
  hl_vec_init(&ix->dirs, sizeof(uint32_t));
  hl_vec_init(&ix->sorted, sizeof(uint64_t));
  if (!rehash(ix, 1024)) return ENOMEM;
  ix->lo = UINT64_MAX;
  struct hl_fill fill = {ix, NULL, 0, 0};
  hl_live_each_locked(fill_one, &fill);
  if (fill.failed) return fill.failed;
  uint32_t count = ix->count = fill.k;
  ix->blocks = hl_scan_map((count ? count : 1) * sizeof *ix->blocks);
  if (!ix->blocks || !hl_vec_reserve(&ix->sorted, ix->regions)) return ENOMEM;
  // Regions in address order; each bucket's count becomes its first index (prefix sums).
  for (size_t i = 0; i < ix->keys.len; i++) {
    uint64_t key = HL_VEC_AT(&ix->keys, uint64_t, i);
    if (key) *(uint64_t *)hl_vec_push(&ix->sorted) =
        (key - 1) << 32 | HL_VEC_AT(&ix->ordinal, uint32_t, i);
  }
  sort_u64((uint64_t *)ix->sorted.data, ix->sorted.len);
  uint32_t base = 0;
  for (size_t r = 0; r < ix->sorted.len; r++) {
    uint32_t *dir = &HL_VEC_AT(&ix->dirs, uint32_t,
                               (HL_VEC_AT(&ix->sorted, uint64_t, r) & 0xFFFFFFFFu) *
                                   (HL_BUCKETS + 1));
    for (int b = 0; b < HL_BUCKETS; b++) {
      uint32_t n = dir[b];
      dir[b] = base;
      base += n;
    }
    dir[HL_BUCKETS] = base;
  }
  // Place each block at its bucket's cursor, then sort each bucket: a few blocks at most.
  size_t cursor_bytes = (ix->dirs.len ? ix->dirs.len : 1) * sizeof(uint32_t);
  uint32_t *cursor = hl_map(cursor_bytes);
  if (!cursor) return ENOMEM;
  if (ix->dirs.len) memcpy(cursor, ix->dirs.data, ix->dirs.len * sizeof(uint32_t));
  fill = (struct hl_fill){ix, cursor, 0, 0};
  hl_live_each_locked(fill_one, &fill);
  hl_unmap(cursor, cursor_bytes);
  if (fill.failed || fill.k != count) return fill.failed ? fill.failed : ENOMEM;
  const uint32_t *dir = (const uint32_t *)ix->dirs.data;
  for (size_t d = 0; d + 1 < ix->dirs.len; d++) {
    if (d % (HL_BUCKETS + 1) == HL_BUCKETS) continue;  // a region's end entry
    for (uint32_t i = dir[d] + 1; i < dir[d + 1]; i++) {
      struct hl_sblock b = ix->blocks[i];
      uint32_t j = i;
      for (; j > dir[d] && hl_sblock_addr(&ix->blocks[j - 1]) > hl_sblock_addr(&b); j--)
        ix->blocks[j] = ix->blocks[j - 1];
      ix->blocks[j] = b;
    }
  }
  if (!count) ix->lo = ix->hi = 0;
  return 0;
}

void hl_index_free(struct hl_index *ix) {
  uint32_t n = ix->count ? ix->count : 1;
  hl_unmap(ix->blocks, n * sizeof *ix->blocks);
  hl_vec_free(&ix->keys);
  hl_vec_free(&ix->ordinal);
  hl_vec_free(&ix->dirs);
  hl_vec_free(&ix->sorted);
  memset(ix, 0, sizeof *ix);
}

// The index of the last block that starts at or before `p`, or -1.
static int64_t predecessor(const struct hl_index *ix, uint64_t p) {
  int64_t region = find_region(ix, p >> 20);
  const uint32_t *dirs = (const uint32_t *)ix->dirs.data;
  if (region >= 0) {
    const uint32_t *dir = dirs + region * (HL_BUCKETS + 1);
    uint32_t b = (uint32_t)((p >> 10) % HL_BUCKETS), lo = dir[b], hi = dir[b + 1];
    if (lo == hi || hl_sblock_addr(&ix->blocks[lo]) > p) return (int64_t)lo - 1;
    while (hi - lo > 1) {  // the greatest start <= p in the bucket
      uint32_t mid = lo + (hi - lo) / 2;
      if (hl_sblock_addr(&ix->blocks[mid]) <= p) lo = mid;
      else hi = mid;
    }
    return lo;
  }
  // No block starts in p's region: the block before the next region's first one.
  const uint64_t *sorted = (const uint64_t *)ix->sorted.data;
  size_t lo = 0, hi = ix->sorted.len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if ((sorted[mid] >> 32) <= p >> 20) lo = mid + 1;
    else hi = mid;
  }
  if (lo == ix->sorted.len) return (int64_t)ix->count - 1;
  return (int64_t)dirs[(sorted[lo] & 0xFFFFFFFFu) * (HL_BUCKETS + 1)] - 1;
}

int64_t hl_index_lookup(const struct hl_index *ix, uint64_t p, int *interior) {
  if (p - ix->lo >= ix->hi - ix->lo) return -1;
  int64_t j = predecessor(ix, p);
  if (j < 0 || p >= hl_sblock_end(&ix->blocks[j])) return -1;
  *interior = p != hl_sblock_addr(&ix->blocks[j]);
  return j;
}
