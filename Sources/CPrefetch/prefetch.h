// A hint that Swift cannot give by itself: start loading the cache line at `address` for a
// write soon. It never faults, whatever the address.
#ifndef HEAPLINE_PREFETCH_H
#define HEAPLINE_PREFETCH_H

static inline void heapline_prefetch(const void *address) { __builtin_prefetch(address, 1); }

#endif
