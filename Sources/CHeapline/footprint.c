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

void hl_footprint_measure(struct hl_footprint *f) {
  struct hl_maps_cache cache = {.refreshes = 0};
  hl_maps_read(&cache.maps);
  f->rss = hl_read_rss();
  f->usable = hl_live_usable_bytes(usable_size, &cache, &f->requested, &f->blocks);
  hl_vec_free(&cache.maps);
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
