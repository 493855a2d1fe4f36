// The trace file: its header, its chunks (compressed, checksummed, each one write) and its
// trailer. A failed write (a full disk) stops the recording and cuts the file back to its last
// whole chunk, so what was written stays readable.
//
// The descriptor is the shim's only one, parked at the top of the program's range. A program may
// still close it (daemons close every descriptor above 2) and open a file of its own that takes
// its number, so each write first checks that the descriptor still is the trace; if not, the
// trace is opened again by its path. The shim never writes into a descriptor it does not own.
//
// Every write advances the commit (shared.c) that `heapline record` trusts after a crash: the
// file up to `offset` holds `chunks` whole chunks with `allocs` ALLOC and `frees` FREE records.
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // static contexts: zstd allocates nothing
#include <zstd.h>

#include "internal.h"

enum { HL_HEADER_BYTES = 48, HL_CHUNK_HEADER_BYTES = 48, HL_ZSTD_LEVEL = 1, HL_COMPRESSORS = 4,
       HL_PATH_MAX = 4096 };

static int hl_fd = -1;
static char hl_path[HL_PATH_MAX];
static dev_t hl_dev;
static ino_t hl_ino;
static _Atomic int hl_file_lock;
static _Atomic int hl_failed;
// Rotation: what the trailers of the recording's earlier files counted as lost, and whether an
// open is the next file of the same recording (hl_writer_next).
static uint64_t hl_lost_earlier;
static int hl_rotating_open;

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

static int pwrite_all(const uint8_t *p, size_t n, uint64_t at) {
  while (n > 0) {
    ssize_t w = pwrite(hl_fd, p, n, (off_t)at);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return w < 0 ? errno : EIO;
    p += w;
    n -= (size_t)w;
    at += (uint64_t)w;
  }
  return 0;
}

static const struct hl_commit *last_commit(void) {
  return &hl_shared->commits[atomic_load_explicit(&hl_shared->seq, memory_order_acquire) & 1];
}

// Publishes a new commit in the slot not in use, then flips to it with one store.
static void publish(const struct hl_commit *next) {
  uint64_t seq = atomic_load_explicit(&hl_shared->seq, memory_order_relaxed);
  hl_shared->commits[(seq + 1) & 1] = *next;
  atomic_store_explicit(&hl_shared->seq, seq + 1, memory_order_release);
}

// Makes sure hl_fd is the trace: after a program closed it, reopens the trace by its path (still
// the same file, checked by device and inode) and parks the new descriptor. Holds the file lock.
static int check_descriptor(void) {
  struct stat st;
  if (hl_fd >= 0 && fstat(hl_fd, &st) == 0 && st.st_dev == hl_dev && st.st_ino == hl_ino)
    return 0;
  // Not ours any more: whoever has that number now owns it, so it is never closed here.
  int fd = open(hl_path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return errno;
  if (fstat(fd, &st) != 0 || st.st_dev != hl_dev || st.st_ino != hl_ino) {
    close(fd);
    return ESTALE;  // the path names another file now
  }
  hl_fd = hl_fd_park(fd);
  if (!(atomic_fetch_or(&hl_shared->flags, HL_FLAG_REOPENED) & HL_FLAG_REOPENED))
    hl_log("the program closed the trace's descriptor: trace reopened", NULL);
  return 0;
}

static int hl_fail_errno;

static void hl_fail(int err) {
  if (atomic_exchange(&hl_failed, 1)) return;
  hl_fail_errno = err;
  if (hl_fd >= 0 && ftruncate(hl_fd, (off_t)last_commit()->offset) != 0) {
    /* the reader stops at the torn chunk */
  }
  atomic_store(&hl_state, HL_STOPPING);
  atomic_store(&hl_shared->state, HL_SHARED_FAILED);
  hl_log("trace write failed, recording stopped: ", strerror(err));
}

// The errno of the write that failed, 0 when none has.
int hl_writer_failed(void) { return atomic_load(&hl_failed) ? hl_fail_errno : 0; }

int hl_writer_open(const char *path, int in_process) {
  size_t len = strlen(path);
  if (len >= sizeof hl_path) return ENAMETOOLONG;
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return errno;
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    int err = errno ? errno : EINVAL;
    close(fd);
    return S_ISREG(st.st_mode) ? err : EINVAL;  // a device or a pipe cannot hold a trace
  }
  if (!hl_rotating_open) hl_lost_earlier = 0;
  memcpy(hl_path, path, len + 1);
  hl_dev = st.st_dev;
  hl_ino = st.st_ino;
  hl_fd = hl_fd_park(fd);
  atomic_store(&hl_failed, 0);
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
  put16(h + 8, 4);  // format version: TraceConstants.version
  put16(h + 10, HL_HEADER_BYTES);
  put32(h + 12, (uint32_t)getpid());
  put64(h + 16, hl_start_ns);
  // The wall-clock time of the recording's start: a rotated file's times count from it too.
  put64(h + 24, (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec - hl_now());
  put32(h + 32, hl_depth);
  put32(h + 36, in_process ? 1 : 0);
  put32(h + 40, (uint32_t)sysconf(_SC_PAGESIZE));
  put32(h + 44, fnv1a(h, 44));
  int err = pwrite_all(h, sizeof h, 0);
  if (err) {
    close(hl_fd);
    hl_fd = -1;
    return err;
  }
  publish(&(struct hl_commit){.offset = sizeof h});
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

void hl_writer_chunk(int kind, struct hl_buffer *b, uint64_t base_time, const uint8_t *raw,
                     uint32_t len) {
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
  // Flag bit 0: nothing but ALLOC, FREE and FREE_NEAR records, so a reader that wants only the
  // stacks and modules (record's symbols pass) need not decompress it: most chunks are such.
  if (b && kind == HL_CHUNK_EVENTS && b->records == b->allocs + b->frees) h[6] = 1;
  put32(h + 8, b ? b->serial : 0);
  put32(h + 12, b ? b->tid : 0);
  put32(h + 16, stored_len);
  put32(h + 20, len);
  put64(h + 24, base_time);
  put64(h + 32, b ? b->first_alloc : 0);
  put32(h + 40, b ? b->records : 0);
  // Format 2: the checksum covers the header too, so a flipped length or time is caught.
  uint32_t sum = fnv1a(h, 44);
  for (uint32_t i = 0; i < stored_len; i++) sum = (sum ^ stored[i]) * 16777619u;
  put32(h + 44, sum);
  hl_spin_lock(&hl_file_lock);
  struct hl_commit next = *last_commit();
  if (b) atomic_store(&b->inflight, next.offset + 1);
  int err = check_descriptor();
  if (!err) err = pwrite_all(h, sizeof h, next.offset);
  if (!err) err = pwrite_all(stored, stored_len, next.offset + sizeof h);
  if (err) hl_fail(err);
  else if (kind == HL_CHUNK_EVENTS) {
    next.offset += sizeof h + stored_len;
    next.chunks++;
    next.allocs += b->allocs;
    next.frees += b->frees;
    publish(&next);
  }
  hl_spin_unlock(&hl_file_lock);
  if (c) atomic_store(&c->lock, 0);
}


static void write_trailer(int reason) {
    const struct hl_commit *done = last_commit();
    uint64_t lost = 0;
    for (int r = 1; r < HL_LOST_REASONS; r++) lost += atomic_load(&hl_shared->lost[r]);
    uint8_t t[64] = {0};
    put64(t, hl_now());
    put64(t + 8, done->chunks);
    put64(t + 16, done->allocs);
    put64(t + 24, done->frees);
    put32(t + 32, (uint32_t)reason);
    put32(t + 36, 0xFFFFFFFFu);  // the exit status is the recorder's to know
    put64(t + 40, lost - hl_lost_earlier);
    hl_lost_earlier = lost;
    put32(t + 48, atomic_load(&hl_shared->flags));
    uint64_t stack_bytes, frames_cut;
    hl_stacks_memory(&stack_bytes, &frames_cut);
    put32(t + 56, (uint32_t)stack_bytes);  // at most 64 MiB (stacks.c)
    put32(t + 60, frames_cut > UINT32_MAX ? UINT32_MAX : (uint32_t)frames_cut);
    hl_writer_chunk(HL_CHUNK_TRAILER, NULL, hl_now(), t, sizeof t);
}

void hl_writer_close(int reason) {
  if (hl_fd < 0) return;
  if (!atomic_load(&hl_failed)) {
    write_trailer(reason);
    if (!atomic_load(&hl_failed)) atomic_store(&hl_shared->state, HL_SHARED_FINISHED);
  }
  close(hl_fd);
  hl_fd = -1;
}

// The caller holds every buffer, so no chunk is on its way to the old file.
int hl_writer_next(const char *path, int in_process) {
  if (hl_fd < 0 || atomic_load(&hl_failed)) return EIO;
  write_trailer(HL_END_ROTATED);
  if (atomic_load(&hl_failed)) return EIO;
  // Synced before the next file exists: a crash from here on leaves this one whole on disk.
  fdatasync(hl_fd);
  close(hl_fd);
  hl_fd = -1;
  hl_rotating_open = 1;
  int err = hl_writer_open(path, in_process);
  hl_rotating_open = 0;
  if (err) hl_fail(err);
  return err;
}

// In a fork child: its copy of the descriptor is no business of the child's program.
void hl_writer_abandon(void) {
  struct stat st;
  if (hl_fd >= 0 && fstat(hl_fd, &st) == 0 && st.st_dev == hl_dev && st.st_ino == hl_ino)
    close(hl_fd);
  hl_fd = -1;
  atomic_store(&hl_file_lock, 0);  // a parent thread may have held it: it does not exist here
}
