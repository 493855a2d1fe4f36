// The footprint: RSS broken down into what accounts for it, written as one FOOTPRINT record at
// the end of a recording and when a memory limit kills the process. Malloc's overhead (usable
// size minus requested size) is summed from the live table here, once, rather than recorded
// with every allocation: the hot path stays as it is, and the sum is exact at that moment.
#include <malloc.h>

#include "internal.h"

void hl_footprint_emit(struct hl_buffer *b, int reason, uint64_t rss) {
  uint64_t requested = 0, blocks = 0;
  uint64_t usable = hl_live_usable_bytes(&requested, &blocks);
  // Free chunks that malloc keeps in its arenas: resident once touched, and in no block.
  struct mallinfo2 info = mallinfo2();
  hl_ensure(b, 1 + 10 + 1 + 6 * 10);
  hl_put_u8(b, HL_TAG_FOOTPRINT);
  hl_put_time(b, hl_now());
  hl_put_u8(b, (uint8_t)reason);
  hl_put_varint(b, rss);
  hl_put_varint(b, requested);
  hl_put_varint(b, usable);
  hl_put_varint(b, blocks);
  hl_put_varint(b, hl_backing_total());
  hl_put_varint(b, info.fordblks);
  b->records++;
}
