// The trace file: its header, its chunks (compressed, checksummed, each one write) and its
// trailer. A failed write (a full disk) stops the recording and cuts the file back to its last
// whole chunk, so what was written stays readable.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // static contexts: zstd allocates nothing
#include <zstd.h>

#include "internal.h"

enum { HL_HEADER_BYTES = 48, HL_CHUNK_HEADER_BYTES = 48, HL_ZSTD_LEVEL = 1, HL_COMPRESSORS = 4 };

_Atomic uint64_t hl_total_allocs, hl_total_frees;
static int hl_fd = -1;
static _Atomic int hl_file_lock;
static uint64_t hl_offset;  // end of the last whole chunk
static uint64_t hl_chunks;
static _Atomic int hl_failed;

// Compressors are few and shared: a context costs half a megabyte, too much for every thread.
struct hl_compressor {
  _Atomic int lock;
  ZSTD_CCtx *cctx;
  uint8_t *out;
};
static struct hl_compressor hl_compressors[HL_COMPRESSORS];
static size_t hl_out_bytes;

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static uint32_t fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static int write_all(const uint8_t *p, size_t n) {
  while (n > 0) {
    ssize_t w = write(hl_fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
  }
  return 0;
}

static void hl_fail(int err) {
  if (atomic_exchange(&hl_failed, 1)) return;
  if (ftruncate(hl_fd, (off_t)hl_offset) != 0) { /* the reader stops at the torn chunk */ }
  atomic_store(&hl_state, HL_STOPPING);
  hl_log("trace write failed, recording stopped: ", strerror(err));
}

int hl_writer_failed(void) { return atomic_load(&hl_failed); }

int hl_writer_open(const char *path, int in_process) {
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  hl_fd = fd;
  hl_offset = 0;
  hl_chunks = 0;
  atomic_store(&hl_failed, 0);
  atomic_store(&hl_total_allocs, 0);
  atomic_store(&hl_total_frees, 0);
  if (!hl_out_bytes) {
    hl_out_bytes = ZSTD_compressBound(HL_BUFFER_BYTES);
    size_t work = ZSTD_estimateCCtxSize(HL_ZSTD_LEVEL);
    for (int i = 0; i < HL_COMPRESSORS; i++) {
      void *space = hl_map(work);
      hl_compressors[i].out = hl_map(hl_out_bytes);
      // A static context allocates nothing: zstd never calls back into malloc from here.
      hl_compressors[i].cctx = space ? ZSTD_initStaticCCtx(space, work) : NULL;
      if (hl_compressors[i].cctx)
        ZSTD_CCtx_setParameter(hl_compressors[i].cctx, ZSTD_c_compressionLevel, HL_ZSTD_LEVEL);
    }
  }
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  uint8_t h[HL_HEADER_BYTES] = {0};
  memcpy(h, "HEAPLINE", 8);
  put16(h + 8, 2);  // format version: TraceConstants.version
  put16(h + 10, HL_HEADER_BYTES);
  put32(h + 12, (uint32_t)getpid());
  put64(h + 16, hl_start_ns);
  put64(h + 24, (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec);
  put32(h + 32, hl_depth);
  put32(h + 36, in_process ? 1 : 0);
  put32(h + 40, (uint32_t)sysconf(_SC_PAGESIZE));
  put32(h + 44, fnv1a(h, 44));
  int err = write_all(h, sizeof h);
  if (err) {
    close(fd);
    hl_fd = -1;
    return err;
  }
  hl_offset = sizeof h;
  return 0;
}

static struct hl_compressor *take_compressor(void) {
  for (;;) {
    for (int i = 0; i < HL_COMPRESSORS; i++) {
      int expected = 0;
      if (hl_compressors[i].cctx && atomic_compare_exchange_strong(&hl_compressors[i].lock,
                                                                   &expected, 1))
        return &hl_compressors[i];
    }
    if (!hl_compressors[0].cctx) return NULL;
  }
}

void hl_writer_chunk(int kind, uint32_t serial, uint32_t tid, uint64_t base_time,
                     uint64_t first_alloc, uint32_t records, const uint8_t *raw, uint32_t len) {
  if (hl_fd < 0 || atomic_load(&hl_failed)) return;
  uint8_t h[HL_CHUNK_HEADER_BYTES] = {0};
  const uint8_t *stored = raw;
  uint32_t stored_len = len;
  struct hl_compressor *c = kind == HL_CHUNK_EVENTS ? take_compressor() : NULL;
  if (c) {
    size_t n = ZSTD_compress2(c->cctx, c->out, hl_out_bytes, raw, len);
    if (!ZSTD_isError(n) && n < len) {
      stored = c->out;
      stored_len = (uint32_t)n;
      h[5] = 1;
    }
  }
  put32(h, 0x4B434C48u);
  h[4] = (uint8_t)kind;
  put32(h + 8, serial);
  put32(h + 12, tid);
  put32(h + 16, stored_len);
  put32(h + 20, len);
  put64(h + 24, base_time);
  put64(h + 32, first_alloc);
  put32(h + 40, records);
  // Format 2: the checksum covers the header too, so a flipped length or time is caught.
  uint32_t sum = fnv1a(h, 44);
  for (uint32_t i = 0; i < stored_len; i++) sum = (sum ^ stored[i]) * 16777619u;
  put32(h + 44, sum);
  hl_spin_lock(&hl_file_lock);
  int err = write_all(h, sizeof h);
  if (!err) err = write_all(stored, stored_len);
  if (err) hl_fail(err);
  else {
    hl_offset += sizeof h + stored_len;
    if (kind == HL_CHUNK_EVENTS) hl_chunks++;
  }
  hl_spin_unlock(&hl_file_lock);
  if (c) atomic_store(&c->lock, 0);
}

void hl_writer_close(int reason) {
  if (hl_fd < 0) return;
  if (!atomic_load(&hl_failed)) {
    uint8_t t[64] = {0};
    put64(t, hl_now());
    put64(t + 8, hl_chunks);
    put64(t + 16, atomic_load(&hl_total_allocs));
    put64(t + 24, atomic_load(&hl_total_frees));
    put32(t + 32, (uint32_t)reason);
    put32(t + 36, 0xFFFFFFFFu);  // the exit status is the recorder's to know
    hl_writer_chunk(HL_CHUNK_TRAILER, 0, 0, hl_now(), 0, 0, t, sizeof t);
  }
  close(hl_fd);
  hl_fd = -1;
}

void hl_writer_abandon(void) {
  if (hl_fd >= 0) close(hl_fd);
  hl_fd = -1;
  atomic_store(&hl_file_lock, 0);  // a parent thread may have held it: it does not exist here
}
