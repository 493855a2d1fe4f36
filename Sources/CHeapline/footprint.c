// The footprint: RSS broken down into what accounts for it, written as one FOOTPRINT record at
// the end of a recording and when a memory limit kills the process. Malloc's overhead (usable
// size minus requested size) is summed from the live table here, once, rather than recorded
// with every allocation: the hot path stays as it is, and the sum is exact at that moment.
#include <malloc.h>
#include <string.h>

#include "leakscan.h"

struct hl_maps_cache {
  struct hl_vec maps;
  int refreshes;
};

// The readable mapping that holds `addr`. Other threads map memory during the walk (a large
// block is a mapping of its own), so a miss reads /proc/self/maps again, a few times at most.
static const struct hl_mapping *readable(struct hl_maps_cache *cache, uint64_t addr) {
  for (;;) {
    const struct hl_mapping *m = hl_maps_find(&cache->maps, addr);
    if (m && (m->flags & HL_MAP_R)) return m;
    if (m || cache->refreshes >= 4) return NULL;
    cache->refreshes++;
    hl_vec_free(&cache->maps);
    hl_maps_read(&cache->maps);
  }
}

// A block whose free the shim never saw (freed from a signal handler while its thread was in
// the shim, or by the shim's own thread) is still in the live table, and its memory may be
// unmapped by now: its header is read only when /proc/self/maps says it can be. A block that
// cannot be read counts as its requested size, without overhead.
static uint64_t usable_size(uint64_t addr, uint64_t requested, void *context) {
  struct hl_maps_cache *cache = context;
  if (!cache->maps.len) return malloc_usable_size((void *)(uintptr_t)addr);  // no maps: trust
  uint64_t header = addr - sizeof(uint64_t);
  const struct hl_mapping *m = readable(cache, header);
  if (!m) return requested;
  uint64_t size;
  memcpy(&size, (const void *)(uintptr_t)header, sizeof size);
  // Outside an mmapped chunk, glibc also reads the next chunk's header: it must be there too.
  uint64_t next = addr - 2 * sizeof(uint64_t) + (size & ~7ull) + sizeof(uint64_t);
  if (!(size & 2) && (next < addr || next + sizeof(uint64_t) > m->hi)) return requested;
  uint64_t usable = malloc_usable_size((void *)(uintptr_t)addr);
  return usable >= requested ? usable : requested;
}

// Blocks lie anywhere in the heap, so each header read is a cache miss, and at millions of
// blocks the misses are most of a recording's end: each block's headers are prefetched, and
// its usable size read only AHEAD blocks later, so that the misses overlap. The sum does not
// care about order: the walk's callback returns an earlier block's size.
enum { HL_AHEAD = 16 };
struct hl_usable_walk {
  struct hl_maps_cache cache;
  uint64_t addr[HL_AHEAD], requested[HL_AHEAD];
  unsigned pending, next;
};

static uint64_t usable_ahead(uint64_t addr, uint64_t requested, void *context) {
  struct hl_usable_walk *w = context;
  __builtin_prefetch((const void *)(uintptr_t)(addr - sizeof(uint64_t)));
  __builtin_prefetch((const void *)(uintptr_t)(addr + requested));  // about the next header
  unsigned slot = w->next;
  w->next = (w->next + 1) % HL_AHEAD;
  uint64_t earlier = w->addr[slot], earlier_requested = w->requested[slot];
  w->addr[slot] = addr;
  w->requested[slot] = requested;
  if (w->pending < HL_AHEAD) {
    w->pending++;
    return 0;
  }
  return usable_size(earlier, earlier_requested, &w->cache);
}

// The blocks still waiting, at the end of a shard.
static uint64_t usable_settle(void *context) {
  struct hl_usable_walk *w = context;
  uint64_t sum = 0;
  for (unsigned k = 0; k < w->pending; k++) {
    unsigned slot = (w->next + HL_AHEAD - w->pending + k) % HL_AHEAD;
    sum += usable_size(w->addr[slot], w->requested[slot], &w->cache);
  }
  w->pending = w->next = 0;
  return sum;
}

void hl_footprint_measure(struct hl_footprint *f) {
  struct hl_usable_walk walk = {.cache.refreshes = 0};
  hl_maps_read(&walk.cache.maps);
  f->rss = hl_read_rss();
  f->usable =
      hl_live_usable_bytes(usable_ahead, usable_settle, &walk, &f->requested, &f->blocks);
  hl_vec_free(&walk.cache.maps);
  f->backing = hl_backing_total();
  // Free chunks that malloc keeps in its arenas: resident once touched, and in no block.
  struct mallinfo2 info = mallinfo2();
  f->allocator_free = info.fordblks;
}

void hl_footprint_write(struct hl_buffer *b, int reason, const struct hl_footprint *f) {
  hl_ensure(b, 1 + 10 + 1 + 6 * 10);
  hl_put_u8(b, HL_TAG_FOOTPRINT);
  hl_put_time(b, hl_now());
  hl_put_u8(b, (uint8_t)reason);
  hl_put_varint(b, f->rss);
  hl_put_varint(b, f->requested);
  hl_put_varint(b, f->usable);
  hl_put_varint(b, f->blocks);
  hl_put_varint(b, f->backing);
  hl_put_varint(b, f->allocator_free);
  hl_commit_record(b);
}
