// Where the threads' buffers live. Under `heapline record` they live in a memory file that the
// recorder made (HEAPLINE_SHARED names it, as /proc/PID/fd/N of the recorder), so that when the
// process dies without finishing its trace (`_exit`, `abort`, a crash, SIGKILL, `exec`), the
// recorder still finds every whole record the threads had not written out, and the commit that
// says how far the file is whole (TraceFormat.md, "Shared buffers"). In process, or when the
// memory file cannot be had, the same structures live in private memory.
//
// The shim holds no descriptor for it: the file is opened, grown and mapped a piece at a time,
// and closed again at once.
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

enum { HL_SHARED_HEADER_BYTES = 4096, HL_SHARED_VERSION = 2 };
// The layout that `heapline record` reads (SharedBuffers.swift, TraceFormat.md).
_Static_assert(__builtin_offsetof(struct hl_shared_header, slots) == 24, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, state) == 28, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, seq) == 32, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, commits) == 40, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, lost) == 104, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, flags) == 136, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, execs) == 140, "shared layout");
_Static_assert(__builtin_offsetof(struct hl_shared_header, side_offset) == 152, "shared layout");

static struct hl_shared_header hl_private_header;
struct hl_shared_header *hl_shared = &hl_private_header;
static struct hl_shared_header *hl_mapped;  // the recorder's, when attached
static char hl_shared_path[256];
static _Atomic int hl_grow_lock;
static uint64_t hl_reported[HL_LOST_REASONS];  // what LOST records have said so far
static int hl_began;  // this program has begun a recording: its buffers are handed out

static size_t slot_bytes(void) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return (sizeof(struct hl_buffer) + page - 1) / page * page;
}

static void init_header(struct hl_shared_header *h) {
  memset(h, 0, sizeof *h);
  memcpy(h->magic, "HLSHARED", 8);
  h->version = HL_SHARED_VERSION;
  h->header_bytes = HL_SHARED_HEADER_BYTES;
  h->slot_bytes = (uint32_t)slot_bytes();
  h->data_offset = (uint32_t)__builtin_offsetof(struct hl_buffer, data);
  h->side_offset = (uint32_t)__builtin_offsetof(struct hl_buffer, side);
}

// Maps `bytes` of the memory file at `offset`, growing the file first when `grow`.
static void *map_piece(uint64_t offset, size_t bytes, int grow) {
  if (grow && !hl_file_fits(offset + bytes)) return NULL;
  int fd = open(hl_shared_path, O_RDWR | O_CLOEXEC);
  if (fd < 0) return NULL;
  void *p = MAP_FAILED;
  if (!grow || ftruncate(fd, (off_t)(offset + bytes)) == 0)
    p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)offset);
  close(fd);
  return p == MAP_FAILED ? NULL : p;
}

void hl_shared_attach(const char *path) {
  if (!path || !*path || strlen(path) >= sizeof hl_shared_path) return;
  memcpy(hl_shared_path, path, strlen(path) + 1);
  struct hl_shared_header *h = map_piece(0, HL_SHARED_HEADER_BYTES, 1);
  if (!h) {
    hl_log("no shared memory from the recorder (", "a crash will lose the last events)");
    hl_shared_path[0] = 0;
    return;
  }
  hl_mapped = hl_shared = h;
}

// For `heapline record`, when the process's malloc is not this library's and no other copy of
// the shim has started recording: the program brings an allocator of its own (defined in it, or
// linked in statically, or `library`, a shared one: see foreign.c), which the preload library
// does not wrap. The recorder finds this magic in place of a recording's, with the library's
// name after it, and says so, rather than guessing at a static or setuid program.
void hl_shared_note_foreign_malloc(const char *path, const char *library) {
  if (!path || !*path || strlen(path) >= sizeof hl_shared_path || hl_mapped) return;
  memcpy(hl_shared_path, path, strlen(path) + 1);
  struct hl_shared_header *h = map_piece(0, HL_SHARED_HEADER_BYTES, 1);
  hl_shared_path[0] = 0;
  if (!h) return;
  if (memcmp(h->magic, "HLSHARED", 8) != 0) {
    memcpy(h->magic, "HLOWNMAL", 8);
    size_t n = strnlen(library, 63);
    memcpy((char *)h + 8, library, n);
    ((char *)h)[8 + n] = 0;
  }
  munmap(h, HL_SHARED_HEADER_BYTES);
}

void hl_shared_begin(void) {
  // What earlier programs of this process (before an exec) moved aside stays known.
  uint32_t execs = hl_shared->execs, first = hl_shared->exec_first, last = hl_shared->exec_last;
  int same = memcmp(hl_shared->magic, "HLSHARED", 8) == 0;
  // A recording begun again in this program (after an exec that failed) keeps the buffers it
  // handed out, mapped and in its threads' hands: counted from 0 again, the next new buffer
  // was mapped over one of them, and shrank the file under the rest (SIGBUS at the next exec).
  uint32_t slots = hl_began ? atomic_load(&hl_shared->slots) : 0;
  hl_began = 1;
  init_header(hl_shared);
  atomic_store(&hl_shared->slots, slots);
  if (same) hl_shared->execs = execs, hl_shared->exec_first = first, hl_shared->exec_last = last;
  memset(hl_reported, 0, sizeof hl_reported);
  atomic_store(&hl_shared->state, HL_SHARED_RECORDING);
}

// A zeroed buffer, in the memory file when there is one. Buffers are never given back: a thread
// that exits hands its buffer to the next new thread (threads.c).
struct hl_buffer *hl_shared_new_buffer(void) {
  if (!hl_mapped) return hl_map(sizeof(struct hl_buffer));
  hl_spin_lock(&hl_grow_lock);
  uint32_t index = atomic_load(&hl_shared->slots);
  uint64_t offset = HL_SHARED_HEADER_BYTES + (uint64_t)index * hl_shared->slot_bytes;
  struct hl_buffer *b = map_piece(offset, hl_shared->slot_bytes, 1);
  if (b) atomic_store(&hl_shared->slots, index + 1);
  hl_spin_unlock(&hl_grow_lock);
  // A file that cannot grow (a full /dev/shm, a file size limit) still leaves private memory,
  // which `record` cannot read if the program dies: the header says there is such a buffer, so
  // that a recovered trace says what it lacks rather than passing for whole.
  if (b) return b;
  atomic_fetch_or(&hl_shared->flags, HL_FLAG_PRIVATE_BUFFER);
  return hl_map(sizeof(struct hl_buffer));
}

// Unmaps a buffer that hl_shared_new_buffer made, shared or private (a fork child drops them).
void hl_shared_drop_buffer(struct hl_buffer *b) {
  if (b) munmap(b, slot_bytes());
}

// In a fork child, before anything else runs: the buffers and the commit are the parent's.
// The child forgets them (it never records) and maps nothing of the parent's any more.
void hl_shared_detach_in_child(void) {
  if (!hl_mapped) return;
  hl_shared = &hl_private_header;
  init_header(hl_shared);
  munmap(hl_mapped, HL_SHARED_HEADER_BYTES);
  hl_mapped = NULL;
  hl_shared_path[0] = 0;
}

void hl_lost(int reason) { atomic_fetch_add_explicit(&hl_shared->lost[reason], 1, memory_order_relaxed); }

// On the shim's own thread: a LOST record for each reason whose count grew.
void hl_lost_poll(struct hl_buffer *b, uint64_t now) {
  for (int r = 1; r < HL_LOST_REASONS; r++) {
    uint64_t total = atomic_load_explicit(&hl_shared->lost[r], memory_order_relaxed);
    if (total == hl_reported[r]) continue;
    if (!hl_reported[1] && !hl_reported[2] && !hl_reported[3])
      hl_log("some allocations could not be recorded: the trace says how many", NULL);
    hl_emit_lost(b, now, r, total - hl_reported[r]);
    hl_reported[r] = total;
  }
}
