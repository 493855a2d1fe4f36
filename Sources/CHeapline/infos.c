// Allocation infos: each distinct (size, stack, category) of the live blocks, stored once. A
// program allocates millions of blocks from far fewer distinct places and sizes, so a live-table
// slot names its block's info in 24 bits instead of holding 80 bits of fields, and fits in 16
// bytes (live.c).
//
// Infos are only added, never removed, until the next trace starts: an index stays valid while a
// slot holds it, and is read without a lock (the leak scan reads slots with the world stopped,
// when any thread may hold the lock). An entry is complete before the count that covers it is
// published. Each thread keeps a small cache of the indices it used last, so most allocations
// take no lock. The table is bounded: past HL_INFO_MAX infos, or when memory runs out, a block
// goes to the live table's side table of full blocks, as before, and nothing is lost.
#include <string.h>

#include "internal.h"

struct hl_info {
  uint32_t size, stack, category;
};

enum {
  HL_INFO_PAGE_BITS = 12,  // 4,096 infos, 48 KiB, a page of the table
  HL_INFO_MAX = 1 << 20,   // 12 MiB of infos and 8 MiB of index at most
  HL_INFO_INDEX_START = 1 << 12,
};

static struct hl_info *hl_info_pages[HL_INFO_MAX >> HL_INFO_PAGE_BITS];
static _Atomic uint32_t hl_info_count = 1;  // index 0 means "no info"
static uint32_t *hl_info_index;             // open addressing over info indices; 0 is empty
static uint32_t hl_info_slots;              // a power of two, at most half full
static _Atomic int hl_info_lock;

static inline uint64_t info_hash(uint64_t size, uint32_t stack, uint32_t category) {
  uint64_t h = (size ^ (uint64_t)stack << 32) * 0x9E3779B97F4A7C15ull;
  h ^= (uint64_t)category * 0xC2B2AE3D27D4EB4Full;
  return h ^ h >> 29;
}

static inline const struct hl_info *info_at(uint32_t i) {
  return &hl_info_pages[i >> HL_INFO_PAGE_BITS][i & ((1u << HL_INFO_PAGE_BITS) - 1)];
}

static inline int same(const struct hl_info *e, uint64_t size, uint32_t stack, uint32_t category) {
  return e->size == size && e->stack == stack && e->category == category;
}

static int grow_index(void) {
  uint32_t slots = hl_info_slots ? hl_info_slots * 2 : HL_INFO_INDEX_START;
  uint32_t *index = hl_map((size_t)slots * sizeof *index);
  if (!index) return 0;
  uint32_t n = atomic_load_explicit(&hl_info_count, memory_order_relaxed);
  for (uint32_t i = 1; i < n; i++) {
    const struct hl_info *e = info_at(i);
    uint32_t j = (uint32_t)info_hash(e->size, e->stack, e->category) & (slots - 1);
    while (index[j]) j = (j + 1) & (slots - 1);
    index[j] = i;
  }
  hl_unmap(hl_info_index, (size_t)hl_info_slots * sizeof *hl_info_index);
  hl_info_index = index;
  hl_info_slots = slots;
  return 1;
}

// With the lock held: the info's index, added when it is new; 0 when there is no room.
static uint32_t find_or_add(uint64_t h, uint64_t size, uint32_t stack, uint32_t category) {
  uint32_t n = atomic_load_explicit(&hl_info_count, memory_order_relaxed);
  // A failed growth leaves the index as it was: the infos it has can still be found.
  if ((uint64_t)(n + 1) * 2 > hl_info_slots && n < HL_INFO_MAX) grow_index();
  if (!hl_info_slots) return 0;
  uint32_t mask = hl_info_slots - 1, j = (uint32_t)h & mask;
  for (uint32_t i; (i = hl_info_index[j]); j = (j + 1) & mask)
    if (same(info_at(i), size, stack, category)) return i;
  if (n >= HL_INFO_MAX || (uint64_t)(n + 1) * 2 > hl_info_slots) return 0;
  struct hl_info **page = &hl_info_pages[n >> HL_INFO_PAGE_BITS];
  if (!*page && !(*page = hl_map(sizeof **page << HL_INFO_PAGE_BITS))) return 0;
  (*page)[n & ((1u << HL_INFO_PAGE_BITS) - 1)] =
      (struct hl_info){.size = (uint32_t)size, .stack = stack, .category = category};
  hl_info_index[j] = n;
  atomic_store_explicit(&hl_info_count, n + 1, memory_order_release);
  return n;
}

// The info the thread's cache holds for (size, stack, category), or 0. Takes no lock, so that
// it may be asked while a live-table shard is held.
HL_HOOK uint32_t hl_info_cached(const uint32_t *cache, uint64_t size, uint32_t stack,
                                uint32_t category) {
  if (!cache || size >> 32) return 0;
  uint32_t i = cache[info_hash(size, stack, category) >> (64 - HL_INFO_CACHE_BITS)];
  return i && i < atomic_load_explicit(&hl_info_count, memory_order_acquire) &&
                 same(info_at(i), size, stack, category)
             ? i
             : 0;
}

HL_HOOK uint32_t hl_info_intern(uint32_t *cache, uint64_t size, uint32_t stack, uint32_t category) {
  if (size >> 32) return 0;
  uint32_t known = hl_info_cached(cache, size, stack, category);
  if (known) return known;
  uint64_t h = info_hash(size, stack, category);
  uint32_t *cached = cache ? &cache[h >> (64 - HL_INFO_CACHE_BITS)] : NULL;
  hl_spin_lock(&hl_info_lock);
  uint32_t i = find_or_add(h, size, stack, category);
  hl_spin_unlock(&hl_info_lock);
  if (cached && i) *cached = i;
  return i;
}

HL_HOOK void hl_info_get(uint32_t i, uint64_t *size, uint32_t *stack, uint32_t *category) {
  const struct hl_info *e = info_at(i);
  *size = e->size;
  *stack = e->stack;
  *category = e->category;
}

// A new trace numbers its stacks from 1 again, so the infos of the last one mean nothing. The
// pages stay mapped for the next infos; the threads' caches see their indices past the count.
void hl_infos_reset(void) {
  hl_spin_lock(&hl_info_lock);
  if (hl_info_index) memset(hl_info_index, 0, (size_t)hl_info_slots * sizeof *hl_info_index);
  atomic_store_explicit(&hl_info_count, 1, memory_order_release);
  hl_spin_unlock(&hl_info_lock);
}

// The bytes the infos have mapped: their pages and their index. Without the lock, like the
// stack table's figure, for a trailer written while another thread may hold it.
uint64_t hl_infos_memory(void) {
  uint64_t pages = 0;
  for (size_t p = 0; p < sizeof hl_info_pages / sizeof *hl_info_pages; p++)
    if (__atomic_load_n(&hl_info_pages[p], __ATOMIC_RELAXED)) pages++;
  return pages * (sizeof(struct hl_info) << HL_INFO_PAGE_BITS) +
         (uint64_t)__atomic_load_n(&hl_info_slots, __ATOMIC_RELAXED) * sizeof(uint32_t);
}
