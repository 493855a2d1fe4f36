// The live table: every block the recording has seen allocated and not yet freed. It is split
// into shards, each a small open-addressing table under its own lock, so threads that free and
// allocate at once rarely meet. Its memory comes from mmap, never from malloc.
//
// A slot is 16 bytes: malloc's blocks are 16-byte aligned below 2^48, so an address fits in 44
// bits beside a thread serial of 20, and a counter fits in 40 beside the block's allocation
// info (its size, stack and category, stored once for all the blocks that share them: infos.c)
// in 24. A block whose fields do not fit (odd address, a thread past the millionth, more than
// 2^40 allocations in one thread, no room for its info) goes to the shard's side table of full
// 40-byte blocks, which stays empty in the usual program. Capacities are any integer, not
// powers of two (a slot's home is the hash scaled to the capacity), so that a table grows by a
// quarter, not by double, and stays between 7/10 and 7/8 full: 18 to 23 bytes a block.
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

enum { HL_SHARDS = 256, HL_SHARD_START = 256, HL_INDEX_BITS = 23, HL_PREFETCH_FROM = 1 << 17 };

#define HL_ADDR_BITS 44
#define HL_ADDR_MASK ((1ull << HL_ADDR_BITS) - 1)

struct hl_slot {
  uint64_t addr_serial;   // addr >> 4 (44 bits), serial (20); 0 marks an empty slot
  uint64_t counter_info;  // counter (40 bits), info (24)
};

struct hl_table {
  uint32_t count, capacity;
  void *slots;  // struct hl_slot (compact) or struct hl_block (the side table)
};

struct hl_shard {
  _Atomic int lock;
  struct hl_table table[2];  // [0] compact, [1] the side table of blocks that do not fit
} __attribute__((aligned(64)));

static struct hl_shard hl_shards[HL_SHARDS];
static _Atomic uint64_t hl_compact_slots;  // the compact tables' capacities, summed

// Blocks in the same 4 KiB of memory share a shard and a run of 256 adjacent slots, each at its
// 16-byte offset in the run; only the run's place is hashed. A program allocates and frees
// blocks near the ones it just allocated and freed, so most probes land on a cache line and a
// page the previous probe loaded: on the Python workload this took an eighth off the CPU of the
// whole recording. A run's place is the page's number times the golden ratio's constant, which
// spaces the pages a heap grows through as evenly as a lattice: with places drawn at random
// (a stronger hash), runs piled up into clusters and a find took 237 probes rather than 6.6.
#define HL_RUN_BITS 8
static inline uint64_t mix(uint64_t addr) {
  return (addr >> (4 + HL_RUN_BITS)) * 0x9E3779B97F4A7C15ull;
}
static inline struct hl_shard *shard_of(uint64_t addr) {
  return &hl_shards[(mix(addr) >> 56) & (HL_SHARDS - 1)];
}
static inline uint32_t home(uint64_t addr, uint32_t capacity) {
  uint32_t run = (uint32_t)(((mix(addr) >> 24 & 0xFFFFFFFFull) * capacity) >> 32);
  uint32_t j = run + (uint32_t)(addr >> 4 & ((1u << HL_RUN_BITS) - 1));
  return j >= capacity ? j - capacity : j;
}
static inline uint32_t next(uint32_t j, uint32_t capacity) { return j + 1 == capacity ? 0 : j + 1; }
static inline uint32_t distance(uint32_t from, uint32_t to, uint32_t capacity) {
  return to >= from ? to - from : to + capacity - from;
}

static inline size_t stride(int big) { return big ? sizeof(struct hl_block) : sizeof(struct hl_slot); }
static inline void *slot_at(const struct hl_table *t, int big, uint32_t j) {
  return (char *)t->slots + (size_t)j * stride(big);
}
static inline uint64_t key_at(const struct hl_table *t, int big, uint32_t j) {
  if (big) return ((const struct hl_block *)t->slots)[j].addr;
  return (((const struct hl_slot *)t->slots)[j].addr_serial & HL_ADDR_MASK) << 4;
}

static inline int pack(const struct hl_block *b, struct hl_slot *s) {
  if ((b->addr & 15) || (b->addr >> (HL_ADDR_BITS + 4)) || (b->serial >> 20) ||
      (b->counter >> 40))
    return 0;
  uint32_t info = b->info ? b->info : hl_info_intern(NULL, b->size, b->stack, b->category);
  if (!info) return 0;
  s->addr_serial = b->addr >> 4 | (uint64_t)b->serial << HL_ADDR_BITS;
  s->counter_info = b->counter | (uint64_t)info << 40;
  return 1;
}

static inline void unpack(const struct hl_table *t, int big, uint32_t j, struct hl_block *out) {
  if (big) {
    *out = ((const struct hl_block *)t->slots)[j];
    out->info = 0;
    return;
  }
  const struct hl_slot *s = &((const struct hl_slot *)t->slots)[j];
  *out = (struct hl_block){.addr = (s->addr_serial & HL_ADDR_MASK) << 4,
                           .counter = s->counter_info & ((1ull << 40) - 1),
                           .serial = (uint32_t)(s->addr_serial >> HL_ADDR_BITS)};
  hl_info_get((uint32_t)(s->counter_info >> 40), &out->size, &out->stack, &out->category);
}

static inline size_t table_bytes(uint32_t capacity, int big) { return (size_t)capacity * stride(big); }

// Growing a table keeps its pages (hl_remap moves them when it must) and puts its blocks back
// from a copy in one scratch buffer that every shard shares: a grow maps a quarter more pages,
// not a whole new table, and unmaps none. Growing into a new table and unmapping the old cost
// the Python workload's recording about 3 % more CPU, most of it the kernel's.
static void *hl_scratch;
static size_t hl_scratch_bytes;
static _Atomic int hl_scratch_lock;  // taken inside a shard's lock, never the other way round

// A grown table's blocks, put back from the scratch copy of the old one. The compact table's
// loop is its own, in locals and whole slots: written once for both kinds, with the slot's
// size a variable, it called memcpy for every slot and read the table's fields back from
// memory after each store (a tenth of the growth's time on the Python workload).
static void put_back_slots(struct hl_slot *slots, uint32_t capacity, const struct hl_slot *from,
                           uint32_t count) {
  for (uint32_t i = 0; i < count; i++) {
    struct hl_slot slot = from[i];
    if (!slot.addr_serial) continue;
    uint32_t j = home((slot.addr_serial & HL_ADDR_MASK) << 4, capacity);
    while (slots[j].addr_serial) j = next(j, capacity);
    slots[j] = slot;
  }
}

static void put_back_blocks(struct hl_table *t, const struct hl_table *old) {
  struct hl_block *blocks = t->slots;
  const struct hl_block *from = old->slots;
  for (uint32_t i = 0; i < old->capacity; i++) {
    if (!from[i].addr) continue;
    uint32_t j = home(from[i].addr, t->capacity);
    while (blocks[j].addr) j = next(j, t->capacity);
    blocks[j] = from[i];
  }
}

static int grow(struct hl_table *t, int big) {
  uint64_t capacity = t->capacity ? (uint64_t)t->capacity + t->capacity / 4 : HL_SHARD_START;
  if (capacity > (1u << HL_INDEX_BITS)) return 0;  // a scan's reference names a slot in 23 bits
  size_t old_bytes = table_bytes(t->capacity, big), bytes = table_bytes((uint32_t)capacity, big);
  uint64_t added = big ? 0 : capacity - t->capacity;
  if (!t->slots) {
    if (!(t->slots = hl_map(bytes))) return 0;
    t->capacity = (uint32_t)capacity;
    atomic_fetch_add_explicit(&hl_compact_slots, added, memory_order_relaxed);
    return 1;
  }
  hl_spin_lock(&hl_scratch_lock);
  if (hl_scratch_bytes < old_bytes) {
    void *scratch = hl_map(bytes);
    if (!scratch) {
      hl_spin_unlock(&hl_scratch_lock);
      return 0;
    }
    hl_unmap(hl_scratch, hl_scratch_bytes);
    hl_scratch = scratch;
    hl_scratch_bytes = bytes;
  }
  void *slots = hl_remap(t->slots, old_bytes, bytes);
  if (!slots) {
    hl_spin_unlock(&hl_scratch_lock);
    return 0;
  }
#ifdef MADV_POPULATE_WRITE
  // The added pages are written at once (the table is over half full, spread evenly), and a
  // probe reads a slot before writing it: a page first read is the zero page and would fault
  // twice, once to read and once more to copy on write. Faulted in writable at once.
  size_t kept = (old_bytes + 4095) & ~(size_t)4095;
  if (bytes > kept) madvise((char *)slots + kept, bytes - kept, MADV_POPULATE_WRITE);
#endif
  memcpy(hl_scratch, slots, old_bytes);
  memset(slots, 0, old_bytes);
  struct hl_table old = {t->count, t->capacity, hl_scratch};
  *t = (struct hl_table){t->count, (uint32_t)capacity, slots};
  if (big) put_back_blocks(t, &old);
  else put_back_slots(slots, (uint32_t)capacity, hl_scratch, old.capacity);
  hl_spin_unlock(&hl_scratch_lock);
  atomic_fetch_add_explicit(&hl_compact_slots, added, memory_order_relaxed);
  return 1;
}

static int64_t find(const struct hl_table *t, int big, uint64_t addr) {
  if (!t->count) return -1;
  for (uint32_t j = home(addr, t->capacity);; j = next(j, t->capacity)) {
    uint64_t key = key_at(t, big, j);
    if (key == addr) return j;
    if (!key) return -1;
  }
}

// Removes a slot and shifts back the entries after it that probed past it (no tombstones).
static void erase(struct hl_table *t, int big, uint32_t hole) {
  for (uint32_t j = next(hole, t->capacity); key_at(t, big, j); j = next(j, t->capacity)) {
    uint32_t want = home(key_at(t, big, j), t->capacity);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    if (distance(want, j, t->capacity) >= distance(hole, j, t->capacity)) {
      memcpy(slot_at(t, big, hole), slot_at(t, big, j), stride(big));
      hole = j;
    }
  }
  memset(slot_at(t, big, hole), 0, stride(big));
  t->count--;
}

static int put(struct hl_table *t, int big, const void *entry, uint64_t addr) {
  if ((uint64_t)(t->count + 1) * 8 > (uint64_t)t->capacity * 7 && !grow(t, big)) return 0;
  uint32_t j = home(addr, t->capacity);
  while (key_at(t, big, j)) j = next(j, t->capacity);
  memcpy(slot_at(t, big, j), entry, stride(big));
  t->count++;
  return 1;
}

// Finds the block in either table: returns 0 (compact) or 1 (side table), or -1.
static int locate(struct hl_shard *s, uint64_t addr, uint32_t *at) {
  for (int big = 0; big < 2; big++) {
    int64_t j = find(&s->table[big], big, addr);
    if (j >= 0) {
      *at = (uint32_t)j;
      return big;
    }
  }
  return -1;
}

static int store(struct hl_shard *s, const struct hl_block *blk) {
  struct hl_slot slot;
  if (pack(blk, &slot)) return put(&s->table[0], 0, &slot, blk->addr);
  return put(&s->table[1], 1, blk, blk->addr);
}

void hl_live_init(void) {}

// Starts loading the slot where `addr` will be inserted or found, without the lock, so that
// its cache miss (the table is as large as the live set, and homes are random) overlaps the
// work before the insert: unwinding the stack. Only once the tables together outgrow the
// cache (2 MiB): before, the prefetch costs what it saves (the Swift churn's recording took
// 1.06 of its CPU with it, paired). It went by each shard's size, from 4,096 slots, but 256
// shards of 1,000 to 4,096 slots are 4 to 16 MiB, out of the cache together (Python's
// recording took 0.93, 0.94 and 1.01 of the CPU it took then in three paired runs, but longer
// runs put that within the noise of the machine that measured it). A table that grows
// meanwhile only wastes the prefetch, which never faults.
HL_HOOK void hl_live_prefetch(uint64_t addr) {
  if (atomic_load_explicit(&hl_compact_slots, memory_order_relaxed) < HL_PREFETCH_FROM) return;
  const struct hl_table *t = &shard_of(addr)->table[0];
  uint32_t capacity = __atomic_load_n(&t->capacity, __ATOMIC_RELAXED);
  const char *slots = __atomic_load_n(&t->slots, __ATOMIC_RELAXED);
  if (slots)
    __builtin_prefetch(slots + (size_t)home(addr, capacity) * sizeof(struct hl_slot), 1);
}

// The usual insert: a compact block, and a shard with no side table. One probe from the home
// slot finds either the address (live already: its free went unseen) or the empty slot to fill.
static int insert_compact(struct hl_shard *s, const struct hl_block *blk, struct hl_block *evicted,
                          int *had) {
  struct hl_slot slot;
  struct hl_table *t = &s->table[0];
  if (s->table[1].count || !pack(blk, &slot)) return 0;
  if ((uint64_t)(t->count + 1) * 8 > (uint64_t)t->capacity * 7 && !grow(t, 0)) return 0;
  uint32_t j = home(blk->addr, t->capacity);
  for (uint64_t key; (key = key_at(t, 0, j)); j = next(j, t->capacity))
    if (key == blk->addr) {
      if (evicted) unpack(t, 0, j, evicted);
      *had = 1;
      t->count--;
      break;
    }
  ((struct hl_slot *)t->slots)[j] = slot;
  t->count++;
  return 1;
}

HL_HOOK void hl_live_insert(const struct hl_block *blk, struct hl_block *evicted, int *had) {
  struct hl_shard *s = shard_of(blk->addr);
  *had = 0;
  hl_spin_lock(&s->lock);
  if (insert_compact(s, blk, evicted, had)) {
    hl_spin_unlock(&s->lock);
    return;
  }
  uint32_t j;
  int big = locate(s, blk->addr, &j);
  if (big >= 0) {
    if (evicted) unpack(&s->table[big], big, j, evicted);
    *had = 1;
    erase(&s->table[big], big, j);
  }
  if (!store(s, blk)) hl_lost(HL_LOST_MEMORY);  // no room to grow: this block's free goes unseen
  hl_spin_unlock(&s->lock);
}

HL_HOOK int hl_live_remove_then(uint64_t addr, struct hl_block *out,
                                void (*then)(const struct hl_block *, void *), void *context) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  uint32_t j;
  int big = locate(s, addr, &j);
  if (big >= 0) {
    unpack(&s->table[big], big, j, out);
    erase(&s->table[big], big, j);
    if (then) then(out, context);
  }
  hl_spin_unlock(&s->lock);
  return big >= 0;
}

HL_HOOK int hl_live_remove(uint64_t addr, struct hl_block *out) {
  return hl_live_remove_then(addr, out, NULL, NULL);
}

// Gives the block at slot `j` of table `big` of `s` a new category. `info` is the block's info
// with it, or 0 when there was no room for it: then the block moves to the side table.
static void recategorize(struct hl_shard *s, int big, uint32_t j, struct hl_block *blk,
                         uint32_t category, uint32_t info) {
  if (!big && info) {
    struct hl_slot *slot = slot_at(&s->table[0], 0, j);
    slot->counter_info = blk->counter | (uint64_t)info << 40;
    return;
  }
  erase(&s->table[big], big, j);
  blk->category = category;
  blk->info = info;
  if (!store(s, blk)) hl_lost(HL_LOST_MEMORY);
}

HL_HOOK int hl_live_set_category(uint64_t addr, uint64_t counter, uint32_t category,
                                 uint32_t info) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  uint32_t j;
  struct hl_block blk;
  int big = locate(s, addr, &j);
  if (big >= 0) unpack(&s->table[big], big, j, &blk);
  int ok = big >= 0 && blk.counter == counter;
  if (ok) recategorize(s, big, j, &blk, category, info);
  hl_spin_unlock(&s->lock);
  return ok;
}

// Reads the first two words of the block allocated as (`serial`, `counter`) and names its
// category from them, in one hold of its shard: the block cannot be freed meanwhile. `name` is
// called with the shard held, so it takes no lock: it answers 1 with the category (0 for none)
// and its info, or 0 when it cannot tell without locks. Returns 0 when the block is no longer
// the one allocated, 1 when its category is settled (and set, unless 0), and 2 when `name`
// could not tell: `words` then holds the block's first words, for hl_live_set_category after.
HL_HOOK int hl_live_name(uint64_t addr, uint32_t serial, uint64_t counter, uint64_t words[2],
                         hl_namer name, void *context, uint32_t *category, uint32_t *info) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  uint32_t j;
  struct hl_block blk;
  int big = locate(s, addr, &j);
  if (big >= 0) unpack(&s->table[big], big, j, &blk);
  int result = 0;
  if (big >= 0 && blk.serial == serial && blk.counter == counter) {
    memcpy(words, (const void *)(uintptr_t)addr, 2 * sizeof *words);
    result = name(words, context, category, info) ? 1 : 2;
    if (result == 1 && *category) recategorize(s, big, j, &blk, *category, *info);
  }
  hl_spin_unlock(&s->lock);
  return result;
}

// Calls `each` for every live block of shard `i`, with its reference for hl_live_block_at.
static void each_in(int i, void (*each)(const struct hl_block *, uint32_t ref, void *),
                    void *context) {
  struct hl_shard *s = &hl_shards[i];
  for (int big = 0; big < 2; big++)
    for (uint32_t j = 0; j < s->table[big].capacity; j++) {
      if (!key_at(&s->table[big], big, j)) continue;
      struct hl_block blk;
      unpack(&s->table[big], big, j, &blk);
      each(&blk, (uint32_t)i << 24 | (uint32_t)big << HL_INDEX_BITS | j, context);
    }
}

struct hl_sums {
  uint32_t category;
  uint64_t bytes, asked, blocks;
  uint64_t (*usable)(uint64_t addr, uint64_t size, void *context);
  void *context;
};

static void add_if_category(const struct hl_block *blk, uint32_t ref, void *context) {
  (void)ref;
  struct hl_sums *sums = context;
  if (blk->category != sums->category) return;
  sums->bytes += blk->size;
  sums->blocks++;
}

uint64_t hl_live_bytes_in(uint32_t category, uint64_t *blocks) {
  struct hl_sums sums = {.category = category};
  for (int i = 0; i < HL_SHARDS; i++) {
    hl_spin_lock(&hl_shards[i].lock);
    each_in(i, add_if_category, &sums);
    hl_spin_unlock(&hl_shards[i].lock);
  }
  if (blocks) *blocks = sums.blocks;
  return sums.bytes;
}

void hl_live_clear(void) {
  for (int i = 0; i < HL_SHARDS; i++) {
    struct hl_shard *s = &hl_shards[i];
    hl_spin_lock(&s->lock);
    for (int big = 0; big < 2; big++) {
      struct hl_table *t = &s->table[big];
      if (t->slots) memset(t->slots, 0, table_bytes(t->capacity, big));
      t->count = 0;
    }
    hl_spin_unlock(&s->lock);
  }
  hl_infos_reset();
}

static void add_usable(const struct hl_block *blk, uint32_t ref, void *context) {
  (void)ref;
  struct hl_sums *sums = context;
  sums->asked += blk->size;
  sums->bytes += sums->usable(blk->addr, blk->size, sums->context);
  sums->blocks++;
}

// Sums the requested and the usable sizes of the live blocks, for the footprint at the end of a
// recording. Only at the end, never per event. Each block's usable size comes from `usable`,
// which may answer for an earlier block of the shard (its sizes are read ahead), and `settle`
// gives the shard's last ones, before the shard's lock is let go: under the lock no recorded
// free can take a block meanwhile.
uint64_t hl_live_usable_bytes(uint64_t (*usable)(uint64_t addr, uint64_t size, void *context),
                              uint64_t (*settle)(void *context), void *context,
                              uint64_t *requested, uint64_t *blocks) {
  struct hl_sums sums = {.usable = usable, .context = context};
  for (int i = 0; i < HL_SHARDS; i++) {
    hl_spin_lock(&hl_shards[i].lock);
    each_in(i, add_usable, &sums);
    sums.bytes += settle(context);
    hl_spin_unlock(&hl_shards[i].lock);
  }
  *requested = sums.asked;
  *blocks = sums.blocks;
  return sums.bytes;
}

// What the table costs: the bytes it and the infos have mapped, and the blocks it holds. The memory of every
// block, all in, is bytes / blocks.
void hl_live_memory(uint64_t *bytes, uint64_t *blocks) {
  uint64_t mapped = 0, held = 0;
  for (int i = 0; i < HL_SHARDS; i++) {
    struct hl_shard *s = &hl_shards[i];
    hl_spin_lock(&s->lock);
    for (int big = 0; big < 2; big++) {
      mapped += (table_bytes(s->table[big].capacity, big) + 4095) & ~(size_t)4095;
      held += s->table[big].count;
    }
    hl_spin_unlock(&s->lock);
  }
  hl_spin_lock(&hl_scratch_lock);
  mapped += (hl_scratch_bytes + 4095) & ~(size_t)4095;
  hl_spin_unlock(&hl_scratch_lock);
  *bytes = mapped + hl_infos_memory();
  *blocks = held;
}

// For the leak scan (leakctl.c): while it holds every shard's lock no block is added or removed,
// so it can stop the world without waiting for a stopped thread's lock.
void hl_live_lock_all(void) {
  for (int i = 0; i < HL_SHARDS; i++) hl_spin_lock(&hl_shards[i].lock);
}

void hl_live_unlock_all(void) {
  for (int i = HL_SHARDS - 1; i >= 0; i--) hl_spin_unlock(&hl_shards[i].lock);
}

// With every lock held: the live blocks, and a block by the reference `each` was given.
uint64_t hl_live_count_locked(void) {
  uint64_t n = 0;
  for (int i = 0; i < HL_SHARDS; i++) n += hl_shards[i].table[0].count + hl_shards[i].table[1].count;
  return n;
}

void hl_live_each_locked(void (*each)(const struct hl_block *, uint32_t ref, void *),
                         void *context) {
  for (int i = 0; i < HL_SHARDS; i++) each_in(i, each, context);
}

void hl_live_block_at(uint32_t ref, struct hl_block *out) {
  int big = (int)(ref >> HL_INDEX_BITS & 1);
  unpack(&hl_shards[ref >> 24].table[big], big, ref & ((1u << HL_INDEX_BITS) - 1), out);
}
