// The address model of a chunk (TraceFormat.md, "Addresses"): what a reader can predict of an
// allocation's address from the records of the chunk before it, so that an ALLOC names its
// address in four bits nearly always, where the address itself took three bytes or more.
//
// glibc gives a request the block of its size class freed last (tcache and fastbins are LIFO),
// or carves it from the heap right after the block carved before. So the model keeps, for each
// size class, the last blocks freed in this chunk, newest last, and where the last carved block
// ends. The reader keeps the same model (AddressModel.swift): both update it with the same
// records in the same order, and it starts empty with every chunk, so a chunk decodes alone.
#ifndef HEAPLINE_MODEL_H
#define HEAPLINE_MODEL_H

#include <stdint.h>
#include <string.h>

enum {
  HL_MODEL_BINS = 66,   // bin = chunk size / 16 up to 1,040 bytes (tcache's range); 0 above
  HL_MODEL_DEPTH = 16,  // freed blocks kept per bin
  HL_ADDR_NEWEST = 0,   // the bin's newest freed block
  HL_ADDR_CARVE = 1,    // where the last carved block ends
  // 2 to 14: the bin's second to fourteenth newest freed block
  HL_ADDR_DEEPEST = 14,
  HL_ADDR_ESCAPE = 15,  // none of those: the address follows as a delta from the carve point
};

struct hl_model {
  uint64_t carve;
  uint8_t count[HL_MODEL_BINS];
  uint64_t slot[HL_MODEL_BINS][HL_MODEL_DEPTH];
};

// glibc's chunk size for a request: the size and an 8-byte header, in 16-byte granules, 32 at
// least. Past 2^60 (no real block) the size itself, so that nothing overflows.
static inline uint64_t hl_chunk_bytes(uint64_t size) {
  if (size >> 60) return size;
  uint64_t c = (size + 8 + 15) & ~(uint64_t)15;
  return c < 32 ? 32 : c;
}

static inline unsigned hl_model_bin(uint64_t size) {
  uint64_t c = hl_chunk_bytes(size);
  return c <= 1040 ? (unsigned)(c >> 4) : 0;
}

static inline void hl_model_reset(struct hl_model *m) {
  m->carve = 0;
  memset(m->count, 0, sizeof m->count);
}

// The code of an allocation at `addr` of `size` bytes, and the model updated past it. For an
// escape, `*carve` is the carve point the address's delta is taken from.
static inline unsigned hl_model_code(struct hl_model *m, uint64_t addr, uint64_t size,
                                     uint64_t *carve) {
  unsigned bin = hl_model_bin(size), n = m->count[bin];
  uint64_t *s = m->slot[bin];
  if (n && s[n - 1] == addr) {
    m->count[bin] = (uint8_t)(n - 1);
    return HL_ADDR_NEWEST;
  }
  *carve = m->carve;
  unsigned code = HL_ADDR_ESCAPE;
  if (addr == m->carve) {
    code = HL_ADDR_CARVE;
  } else {
    for (unsigned k = 2; k <= n && k <= HL_ADDR_DEEPEST; k++) {
      if (s[n - k] != addr) continue;
      memmove(s + n - k, s + n - k + 1, (k - 1) * sizeof *s);
      m->count[bin] = (uint8_t)(n - 1);
      return k;
    }
  }
  m->carve = addr + hl_chunk_bytes(size);
  return code;
}

// A block of this chunk freed: the newest of its bin, the oldest dropped when the bin is full.
static inline void hl_model_freed(struct hl_model *m, uint64_t addr, uint64_t size) {
  unsigned bin = hl_model_bin(size), n = m->count[bin];
  uint64_t *s = m->slot[bin];
  if (n == HL_MODEL_DEPTH) {
    memmove(s, s + 1, (HL_MODEL_DEPTH - 1) * sizeof *s);
    n--;
  }
  s[n] = addr;
  m->count[bin] = (uint8_t)(n + 1);
}

#endif
