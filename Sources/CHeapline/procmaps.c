// The process's maps, read with raw system calls and parsed into an array from mmap: the scan
// reads them while the world is stopped, when stdio and malloc may be locked by a stopped thread.
// Through /proc/thread-self: /proc/self is the main thread, whose maps read empty once it has
// called pthread_exit while the other threads run on.
#include <errno.h>
#include <fcntl.h>
#include <sys/uio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "leakscan.h"

static uint64_t hex(const char **p) {
  uint64_t v = 0;
  for (;; (*p)++) {
    char c = **p;
    if (c >= '0' && c <= '9') v = v * 16 + (uint64_t)(c - '0');
    else if (c >= 'a' && c <= 'f') v = v * 16 + (uint64_t)(c - 'a' + 10);
    else return v;
  }
}

static const char *skip_field(const char *p, const char *end) {
  while (p < end && *p != ' ' && *p != '\n') p++;
  while (p < end && *p == ' ') p++;
  return p;
}

// One line: "lo-hi perms offset dev inode   path".
static void parse_line(const char *p, const char *end, struct hl_vec *out) {
  struct hl_mapping *m = hl_vec_push(out);
  if (!m) return;
  m->lo = hex(&p);
  p++;
  m->hi = hex(&p);
  p++;
  m->flags = (p[0] == 'r' ? HL_MAP_R : 0) | (p[1] == 'w' ? HL_MAP_W : 0) |
             (p[2] == 'x' ? HL_MAP_X : 0) | (p[3] == 's' ? HL_MAP_SHARED : 0);
  p = skip_field(p, end);  // perms
  p = skip_field(p, end);  // offset
  p = skip_field(p, end);  // device
  uint64_t inode = 0;
  while (p < end && *p >= '0' && *p <= '9') inode = inode * 10 + (uint64_t)(*p++ - '0');
  while (p < end && *p == ' ') p++;
  if (inode) m->flags |= HL_MAP_FILE;
  if (end - p >= 6 && !memcmp(p, "[heap]", 6)) m->flags |= HL_MAP_HEAP;
  if (end - p >= 7 && !memcmp(p, "[stack]", 7)) m->flags |= HL_MAP_STACK;
  // The kernel's own ([vvar], [vdso], [uprobes]…); named anonymous memory ([anon:…]) is not.
  if (p < end && *p == '[' && !(m->flags & (HL_MAP_HEAP | HL_MAP_STACK)) &&
      !(end - p >= 6 && !memcmp(p, "[anon:", 6)))
    m->flags |= HL_MAP_SPECIAL;
}

int hl_maps_read(struct hl_vec *out) {
  hl_vec_init(out, sizeof(struct hl_mapping));
  long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 1;
  struct hl_vec text;
  hl_vec_init(&text, 1);
  for (;;) {  // the kernel gives whole lines per read, so the text is whole at the end
    if (!hl_vec_reserve(&text, 4096)) break;
    long n = syscall(SYS_read, fd, text.data + text.len, text.cap - text.len);
    if (n <= 0) break;
    text.len += (size_t)n;
  }
  syscall(SYS_close, fd);
  const char *p = (const char *)text.data, *end = p + text.len;
  while (p < end) {
    const char *eol = memchr(p, '\n', (size_t)(end - p));
    if (!eol) eol = end;
    parse_line(p, eol, out);
    p = eol + 1;
  }
  hl_vec_free(&text);
  return 0;
}

// The kernel's answer for one address (PROCMAP_QUERY, Linux 6.11; uapi/linux/fs.h, which this
// system's headers may predate): the bounds of the mapping that holds it, without the text of
// every mapping. Reading the whole of maps for each new thread's stack made a program that
// starts threads by the thousand, 40 at a time, 55 times slower to start each.
struct hl_procmap_query {
  uint64_t size, query_flags, query_addr, vma_start, vma_end, vma_flags, vma_page_size,
      vma_offset, inode;
  uint32_t dev_major, dev_minor, vma_name_size, build_id_size;
  uint64_t vma_name_addr, build_id_addr;
};
_Static_assert(sizeof(struct hl_procmap_query) == 104, "procmap_query");
#define HL_PROCMAP_QUERY 0xC0686611ul  // _IOWR('f', 17, struct procmap_query)

int hl_maps_query(uintptr_t addr, uintptr_t *lo, uintptr_t *hi) {
  static int unsupported;  // an older kernel: asked once
  if (__atomic_load_n(&unsupported, __ATOMIC_RELAXED)) return 0;
  long fd = syscall(SYS_openat, AT_FDCWD, "/proc/thread-self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return 0;
  struct hl_procmap_query q = {.size = sizeof q, .query_addr = addr};
  long err = syscall(SYS_ioctl, fd, HL_PROCMAP_QUERY, &q);
  syscall(SYS_close, fd);
  if (err != 0) {
    if (errno == ENOTTY || errno == EINVAL) __atomic_store_n(&unsupported, 1, __ATOMIC_RELAXED);
    return 0;
  }
  *lo = (uintptr_t)q.vma_start;
  *hi = (uintptr_t)q.vma_end;
  return q.vma_start <= addr && addr < q.vma_end;
}

const struct hl_mapping *hl_maps_find(const struct hl_vec *maps, uintptr_t addr) {
  const struct hl_mapping *m = (const struct hl_mapping *)maps->data;
  size_t lo = 0, hi = maps->len;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (m[mid].hi <= addr) lo = mid + 1;
    else hi = mid;
  }
  return lo < maps->len && m[lo].lo <= addr ? &m[lo] : NULL;
}

// Reads memory that may have been unmapped since the maps were read: the kernel checks it.
// Through the calling thread's id, not the process's: once the main thread has called
// pthread_exit, the process's id names a zombie with no memory, and every read failed (a scan
// at exit then read none of the program's private mappings, and called what they held lost).
int hl_safe_read(uintptr_t addr, void *out, size_t bytes) {
  struct iovec local = {out, bytes}, remote = {(void *)addr, bytes};
  return syscall(SYS_process_vm_readv, syscall(SYS_gettid), &local, 1UL, &remote, 1UL, 0UL) ==
         (long)bytes;
}
