// The live table: every block the recording has seen allocated and not yet freed. It is split
// into shards, each a small open-addressing table under its own lock, so threads that free and
// allocate at once rarely meet. Its memory comes from mmap, never from malloc.
#include <string.h>

#include "internal.h"

enum { HL_SHARDS = 256, HL_SHARD_START = 256 };

struct hl_shard {
  _Atomic int lock;
  uint32_t count, capacity;  // capacity is a power of two; addr 0 marks an empty slot
  struct hl_block *slots;
} __attribute__((aligned(64)));

static struct hl_shard hl_shards[HL_SHARDS];

static inline uint64_t mix(uint64_t addr) { return (addr >> 4) * 0x9E3779B97F4A7C15ull; }
static inline struct hl_shard *shard_of(uint64_t addr) {
  return &hl_shards[(mix(addr) >> 56) & (HL_SHARDS - 1)];
}
static inline uint32_t home(uint64_t addr, uint32_t capacity) {
  return (uint32_t)(mix(addr) >> 20) & (capacity - 1);
}

void hl_live_init(void) {}

static int grow(struct hl_shard *s) {
  uint32_t capacity = s->capacity ? s->capacity * 2 : HL_SHARD_START;
  struct hl_block *slots = hl_map((size_t)capacity * sizeof *slots);
  if (!slots) return 0;
  for (uint32_t i = 0; i < s->capacity; i++) {
    if (!s->slots[i].addr) continue;
    uint32_t j = home(s->slots[i].addr, capacity);
    while (slots[j].addr) j = (j + 1) & (capacity - 1);
    slots[j] = s->slots[i];
  }
  hl_unmap(s->slots, (size_t)s->capacity * sizeof *s->slots);
  s->slots = slots;
  s->capacity = capacity;
  return 1;
}

static struct hl_block *find(struct hl_shard *s, uint64_t addr) {
  if (!s->capacity) return NULL;
  for (uint32_t j = home(addr, s->capacity);; j = (j + 1) & (s->capacity - 1)) {
    if (s->slots[j].addr == addr) return &s->slots[j];
    if (!s->slots[j].addr) return NULL;
  }
}

// Removes a slot and shifts back the entries after it that probed past it (no tombstones).
static void erase(struct hl_shard *s, struct hl_block *slot) {
  uint32_t mask = s->capacity - 1, hole = (uint32_t)(slot - s->slots);
  for (uint32_t j = (hole + 1) & mask; s->slots[j].addr; j = (j + 1) & mask) {
    uint32_t want = home(s->slots[j].addr, s->capacity);
    // Move j into the hole unless its home lies cyclically in (hole, j].
    if (((j - want) & mask) >= ((j - hole) & mask)) {
      s->slots[hole] = s->slots[j];
      hole = j;
    }
  }
  memset(&s->slots[hole], 0, sizeof s->slots[hole]);
  s->count--;
}

HL_HOOK void hl_live_insert(const struct hl_block *blk, struct hl_block *evicted, int *had) {
  struct hl_shard *s = shard_of(blk->addr);
  *had = 0;
  hl_spin_lock(&s->lock);
  struct hl_block *slot = find(s, blk->addr);
  if (slot) {
    if (evicted) *evicted = *slot;
    *had = 1;
    *slot = *blk;
  } else if ((s->count + 1) * 2 <= s->capacity || grow(s)) {
    uint32_t j = home(blk->addr, s->capacity);
    while (s->slots[j].addr) j = (j + 1) & (s->capacity - 1);
    s->slots[j] = *blk;
    s->count++;
  } else {
    hl_lost(HL_LOST_MEMORY);  // no room to grow: this block's free will go unseen
  }
  hl_spin_unlock(&s->lock);
}

HL_HOOK int hl_live_remove(uint64_t addr, struct hl_block *out) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  struct hl_block *slot = find(s, addr);
  if (slot) {
    *out = *slot;
    erase(s, slot);
  }
  hl_spin_unlock(&s->lock);
  return slot != NULL;
}

HL_HOOK int hl_live_peek(uint64_t addr, uint32_t serial, uint64_t counter, uint64_t words[2]) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  struct hl_block *slot = find(s, addr);
  int ok = slot && slot->serial == serial && slot->counter == counter;
  if (ok) memcpy(words, (const void *)(uintptr_t)addr, 2 * sizeof *words);
  hl_spin_unlock(&s->lock);
  return ok;
}

HL_HOOK int hl_live_set_category(uint64_t addr, uint64_t counter, uint32_t category) {
  struct hl_shard *s = shard_of(addr);
  hl_spin_lock(&s->lock);
  struct hl_block *slot = find(s, addr);
  int ok = slot && slot->counter == counter;
  if (ok) slot->category = category;
  hl_spin_unlock(&s->lock);
  return ok;
}

uint64_t hl_live_bytes_in(uint32_t category, uint64_t *blocks) {
  uint64_t bytes = 0, count = 0;
  for (int i = 0; i < HL_SHARDS; i++) {
    struct hl_shard *s = &hl_shards[i];
    hl_spin_lock(&s->lock);
    for (uint32_t j = 0; j < s->capacity; j++)
      if (s->slots[j].addr && s->slots[j].category == category) {
        bytes += s->slots[j].size;
        count++;
      }
    hl_spin_unlock(&s->lock);
  }
  if (blocks) *blocks = count;
  return bytes;
}

void hl_live_clear(void) {
  for (int i = 0; i < HL_SHARDS; i++) {
    struct hl_shard *s = &hl_shards[i];
    hl_spin_lock(&s->lock);
    if (s->slots) memset(s->slots, 0, (size_t)s->capacity * sizeof *s->slots);
    s->count = 0;
    hl_spin_unlock(&s->lock);
  }
}

// Sums the requested and the usable sizes of the live blocks, for the footprint at the end of a
// recording. Only at the end, never per event. Each block's usable size comes from `usable`,
// called under the block's shard lock: no recorded free can take the block meanwhile.
uint64_t hl_live_usable_bytes(uint64_t (*usable)(uint64_t addr, uint64_t size, void *context),
                              void *context, uint64_t *requested, uint64_t *blocks) {
  uint64_t total = 0, asked = 0, count = 0;
  for (int i = 0; i < HL_SHARDS; i++) {
    struct hl_shard *s = &hl_shards[i];
    hl_spin_lock(&s->lock);
    for (uint32_t j = 0; j < s->capacity; j++)
      if (s->slots[j].addr) {
        asked += s->slots[j].size;
        total += usable(s->slots[j].addr, s->slots[j].size, context);
        count++;
      }
    hl_spin_unlock(&s->lock);
  }
  *requested = asked;
  *blocks = count;
  return total;
}

// For the leak scan (leakctl.c): while it holds every shard's lock no block is added or removed,
// so it can stop the world without waiting for a stopped thread's lock.
void hl_live_lock_all(void) {
  for (int i = 0; i < HL_SHARDS; i++) hl_spin_lock(&hl_shards[i].lock);
}

void hl_live_unlock_all(void) {
  for (int i = HL_SHARDS - 1; i >= 0; i--) hl_spin_unlock(&hl_shards[i].lock);
}

// Shard `i`'s slots (addr 0 marks an empty one; NULL when it never held a block), with every
// lock held. Returns 0 once `i` is past the last shard.
int hl_live_shard(int i, const struct hl_block **slots, uint32_t *capacity, uint32_t *count) {
  if (i < 0 || i >= HL_SHARDS) return 0;
  *slots = hl_shards[i].slots;
  *capacity = hl_shards[i].slots ? hl_shards[i].capacity : 0;
  *count = hl_shards[i].count;
  return 1;
}
