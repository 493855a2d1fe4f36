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
#include <sched.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#define ZSTD_STATIC_LINKING_ONLY  // static contexts: zstd allocates nothing
#include <zstd.h>

#include "internal.h"

enum { HL_HEADER_BYTES = 48, HL_CHUNK_HEADER_BYTES = 48, HL_ZSTD_LEVEL = 1, HL_COMPRESSORS = 4,
       HL_PATH_MAX = 4096, HL_FORMAT_VERSION = 6 };

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

// Compressors are few and shared: a context costs megabytes, too much for every thread.
struct hl_compressor {
  _Atomic int lock;
  ZSTD_CCtx *cctx;
  uint8_t *out;
};
static struct hl_compressor hl_compressors[HL_COMPRESSORS];
static size_t hl_out_bytes;

// zstd's memory comes from hl_map, never malloc: it must not call back into the hooks. Each
// piece keeps its length in front of it, for the unmap.
static void *zstd_alloc(void *opaque, size_t size) {
  (void)opaque;
  size_t total = size + 16;
  uint8_t *p = hl_map(total);
  if (!p) return NULL;
  memcpy(p, &total, sizeof total);
  return p + 16;
}

static void zstd_free(void *opaque, void *address) {
  (void)opaque;
  if (!address) return;
  uint8_t *p = (uint8_t *)address - 16;
  size_t total;
  memcpy(&total, p, sizeof total);
  hl_unmap(p, total);
}

// Level 1 with long-distance matching over the whole two megabytes of a chunk: a program that
// loops writes the same run of records again and again, further apart than level 1 looks on its
// own (a tenth of the Python workload's bytes, and three quarters of a churn's).
static ZSTD_CCtx *new_compressor(void) {
  ZSTD_CCtx *cctx = ZSTD_createCCtx_advanced((ZSTD_customMem){zstd_alloc, zstd_free, NULL});
  if (!cctx) return NULL;
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, HL_ZSTD_LEVEL);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_enableLongDistanceMatching, 1);
  ZSTD_CCtx_setParameter(cctx, ZSTD_c_windowLog, 21);
  return cctx;
}

static void put16(uint8_t *p, uint16_t v) { memcpy(p, &v, 2); }
static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

static uint32_t fnv1a(const uint8_t *p, size_t n) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 16777619u;
  return h;
}

static int pwrite_all(const uint8_t *p, size_t n, uint64_t at) {
  if (!hl_file_fits(at + n)) return EFBIG;
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
// The trace opened again when the program holds every descriptor under its limit (it closed the
// shim's, then opened files up to the limit): the soft limit is raised by one for the open and
// put back at once, so the program's own opens fail where they would untraced. Before, the
// write failed and the recording stopped, its events all lost.
static int open_past_limit(void) {
  struct rlimit limit;
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return -1;
  struct rlimit more = {limit.rlim_cur + 1, limit.rlim_max};
  if (setrlimit(RLIMIT_NOFILE, &more) != 0) return -1;
  int fd = open(hl_path, O_WRONLY | O_CLOEXEC);
  int err = errno;
  setrlimit(RLIMIT_NOFILE, &limit);
  errno = err;
  return fd;
}

// Whether `st`, found (`got` 0), is the trace's file.
static int names_trace(int got, const struct stat *st) {
  return got == 0 && st->st_dev == hl_dev && st->st_ino == hl_ino;
}

// Whether `fd` is the trace's file still: a program may have put a file of its own on its number.
static int is_trace(int fd) { return hl_fd_names(fd, hl_dev, hl_ino); }

int hl_writer_descriptor(void) {
  int fd = hl_fd;
  return fd >= 0 && is_trace(fd) ? fd : -1;
}

static int check_descriptor(void) {
  if (is_trace(hl_fd)) return 0;
  // Not ours any more: whoever has that number now owns it, so it is never closed here.
  int fd = open(hl_path, O_WRONLY | O_CLOEXEC);
  // The one descriptor past the limit may be taken for an instant by another open (the shim's
  // thread reads its /proc files twice a sample): a few tries, not one.
  for (int tries = 0; fd < 0 && errno == EMFILE && tries < 16; tries++) {
    if (tries) sched_yield();
    fd = open_past_limit();
  }
  if (fd < 0) return errno;
  if (!is_trace(fd)) {
    close(fd);
    return ESTALE;  // the path names another file now
  }
  hl_fd = hl_fd_park(fd);
  if (!(atomic_fetch_or(&hl_shared->flags, HL_FLAG_REOPENED) & HL_FLAG_REOPENED))
    hl_log("the program closed the trace's descriptor: trace reopened", NULL);
  return 0;
}

static int hl_fail_errno;

// Cuts the file back to its last whole chunk (or the reader stops at the torn one). A write that
// failed because the program took the descriptor's number for a file of its own, and every
// other number too (so the trace could not be opened again), left `hl_fd` naming the program's
// file: cut through it, that file lost all but its first bytes, or was padded with zeros past
// its end. Then the trace is cut by its path, if that still names it, and `hl_fd` is forgotten.
static void hl_fail(int err) {
  if (atomic_exchange(&hl_failed, 1)) return;
  hl_fail_errno = err;
  off_t whole = (off_t)last_commit()->offset;
  struct stat st;
  if (is_trace(hl_fd)) {
    if (ftruncate(hl_fd, whole) != 0) { /* the reader stops at the torn chunk */
    }
  } else {
    hl_fd = -1;
    if (names_trace(stat(hl_path, &st), &st) && truncate(hl_path, whole) != 0) { /* as above */
    }
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
  // The mode `heapline record` made the first file with, for the files made after an exec and
  // at each rotation: with the program's umask, one that had set 0777 left traces no one could
  // read. A recording begun in process keeps the program's umask.
  long mode = hl_option_long("HEAPLINE_TRACE_MODE", -1, 0, 0777);
  if (mode >= 0 && fchmod(fd, (mode_t)mode) != 0) { /* the file is written all the same */
  }
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
    hl_out_bytes = ZSTD_compressBound(HL_BUFFER_BYTES) + ZSTD_compressBound(HL_SIDE_BYTES + 8);
    for (int i = 0; i < HL_COMPRESSORS; i++) {
      hl_compressors[i].out = hl_map(hl_out_bytes);
      hl_compressors[i].cctx = hl_compressors[i].out ? new_compressor() : NULL;
    }
  }
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  uint8_t h[HL_HEADER_BYTES] = {0};
  memcpy(h, "HEAPLINE", 8);
  put16(h + 8, HL_FORMAT_VERSION);  // TraceConstants.version
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

// A free compressor; NULL when there are none. A pass that finds them all taken gives the
// processor up: their holders may be waiting for it (more threads than processors flushing at
// once, as a program's threads exiting together do), and a thread that spun instead took 64 %
// of the samples of a program that starts threads by the thousand.
static struct hl_compressor *take_compressor(void) {
  for (;;) {
    for (int i = 0; i < HL_COMPRESSORS; i++) {
      int expected = 0;
      if (hl_compressors[i].cctx && atomic_compare_exchange_strong(&hl_compressors[i].lock,
                                                                   &expected, 1))
        return &hl_compressors[i];
    }
    if (!hl_compressors[0].cctx) return NULL;
    sched_yield();
  }
}

// Writes one chunk: its header, then `parts` (raw) or `out` (their compressed frames).
static void write_chunk(const uint8_t *h, const uint8_t *const *parts, const uint32_t *lens,
                        int n, struct hl_buffer *b, int events) {
  hl_spin_lock(&hl_file_lock);
  struct hl_commit next = *last_commit();
  if (b) atomic_store(&b->inflight, next.offset + 1);
  int err = check_descriptor();
  uint64_t at = next.offset;
  if (!err) err = pwrite_all(h, HL_CHUNK_HEADER_BYTES, at);
  at += HL_CHUNK_HEADER_BYTES;
  for (int i = 0; i < n && !err; i++) {
    err = pwrite_all(parts[i], lens[i], at);
    at += lens[i];
  }
  if (err) hl_fail(err);
  else if (events) {
    next.offset = at;
    next.chunks++;
    next.allocs += b->allocs;
    next.frees += b->frees;
    publish(&next);
  }
  hl_spin_unlock(&hl_file_lock);
}

static void seal_header(uint8_t *h, const uint8_t *const *parts, const uint32_t *lens, int n) {
  uint32_t sum = fnv1a(h, 44);
  for (int i = 0; i < n; i++)
    for (uint32_t j = 0; j < lens[i]; j++) sum = (sum ^ parts[i][j]) * 16777619u;
  put32(h + 44, sum);
}

// An events chunk of `b`'s whole records. Its payload is the side section, after its length,
// then the events (TraceFormat.md, "Payload"); compressed, each is a zstd frame of its own.
void hl_writer_chunk(struct hl_buffer *b, uint64_t base_time) {
  if (hl_fd < 0 || atomic_load(&hl_failed)) return;
  uint32_t side_len = b->side_len, len = b->len;
  const uint8_t *parts[2];
  uint32_t lens[2], raw = 0;
  int n = 0;
  if (side_len) {
    uint8_t prefix[8];
    uint32_t k = 0;
    for (uint32_t v = side_len; v >= 0x80; v >>= 7) prefix[k++] = (uint8_t)(v | 0x80);
    prefix[k] = (uint8_t)(side_len >> (7 * k));
    k++;
    memcpy(b->side - k, prefix, k);  // side_prefix: the length goes just before the records
    parts[n] = b->side - k;
    lens[n++] = k + side_len;
  }
  if (len) {
    parts[n] = b->data;
    lens[n++] = len;
  }
  for (int i = 0; i < n; i++) raw += lens[i];
  uint8_t h[HL_CHUNK_HEADER_BYTES] = {0};
  struct hl_compressor *c = take_compressor();
  const uint8_t *frames[1];
  uint32_t stored = 0;
  if (c) {
    size_t done = 0;
    for (int i = 0; i < n && done != (size_t)-1; i++) {
      size_t z = ZSTD_compress2(c->cctx, c->out + done, hl_out_bytes - done, parts[i], lens[i]);
      done = ZSTD_isError(z) ? (size_t)-1 : done + z;
    }
    if (done < raw) {
      frames[0] = c->out;
      stored = (uint32_t)done;
      h[5] = 1;
    }
  }
  put32(h, 0x4B434C48u);
  h[4] = HL_CHUNK_EVENTS;
  // Flag bit 0: no stack or module records, so a reader that wants only those (record's
  // symbols pass) need not decompress it: most chunks are such.
  put16(h + 6, (uint16_t)((b->stack_records ? 0 : HL_CHUNK_NO_STACKS) |
                          (side_len ? HL_CHUNK_SIDE : 0)));
  put32(h + 8, b->serial);
  put32(h + 12, b->tid);
  put32(h + 16, h[5] ? stored : raw);
  put32(h + 20, raw);
  put64(h + 24, base_time);
  put64(h + 32, b->first_alloc);
  put32(h + 40, b->records);
  uint32_t one = stored;
  if (h[5]) {
    seal_header(h, frames, &one, 1);
    write_chunk(h, frames, &one, 1, b, 1);
  } else {
    seal_header(h, parts, lens, n);
    write_chunk(h, parts, lens, n, b, 1);
  }
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
    // A private buffer is written here like any other: only a recovered trace lacks one
    uint32_t flags = atomic_load(&hl_shared->flags) & ~(uint32_t)HL_FLAG_PRIVATE_BUFFER;
    put32(t + 48, flags | hl_categories_full());
    uint64_t stack_bytes, frames_cut;
    hl_stacks_memory(&stack_bytes, &frames_cut);
    put32(t + 56, (uint32_t)stack_bytes);  // at most 64 MiB (stacks.c)
    put32(t + 60, frames_cut > UINT32_MAX ? UINT32_MAX : (uint32_t)frames_cut);
    uint8_t h[HL_CHUNK_HEADER_BYTES] = {0};
    put32(h, 0x4B434C48u);
    h[4] = HL_CHUNK_TRAILER;
    put32(h + 16, sizeof t);
    put32(h + 20, sizeof t);
    put64(h + 24, hl_now());
    const uint8_t *parts[1] = {t};
    uint32_t lens[1] = {sizeof t};
    seal_header(h, parts, lens, 1);
    write_chunk(h, parts, lens, 1, NULL, 0);
}

void hl_writer_close(int reason) {
  if (hl_fd < 0) return;
  if (!atomic_load(&hl_failed)) {
    write_trailer(reason);
    if (!atomic_load(&hl_failed)) atomic_store(&hl_shared->state, HL_SHARED_FINISHED);
  }
  if (is_trace(hl_fd)) close(hl_fd);
  hl_fd = -1;
}

// The caller holds every buffer, so no chunk is on its way to the old file.
int hl_writer_next(const char *path, int in_process) {
  if (hl_fd < 0 || atomic_load(&hl_failed)) return EIO;
  write_trailer(HL_END_ROTATED);
  if (atomic_load(&hl_failed)) return EIO;
  // Synced before the next file exists: a crash from here on leaves this one whole on disk.
  if (is_trace(hl_fd)) {
    fdatasync(hl_fd);
    close(hl_fd);
  }
  hl_fd = -1;
  hl_rotating_open = 1;
  int err = hl_writer_open(path, in_process);
  hl_rotating_open = 0;
  if (err) hl_fail(err);
  return err;
}

// In a fork child: its copy of the descriptor is no business of the child's program.
void hl_writer_abandon(void) {
  if (is_trace(hl_fd)) close(hl_fd);
  hl_fd = -1;
  atomic_store(&hl_file_lock, 0);  // a parent thread may have held it: it does not exist here
}
