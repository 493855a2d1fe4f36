// The roots of the leak scan: the writable segments of loaded modules (not the preload
// library's: it holds the shim's table pointers, never the program's), every thread's registers,
// stack (from its stack pointer up: below it, even in the red zone, lie stale copies of pointers
// that calls left behind, which would hide leaks, as LeakSanitizer also finds) and static TLS, regions the program
// registered, and the Swift runtime's metadata pools. Module segments and symbols are looked up
// before the world stops, since dl_iterate_phdr and dlsym take the loader's lock.
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapline.h"
#include "leakscan.h"

struct hl_modules {
  struct hl_vec writable;  // struct hl_mapping: segments to scan
  struct hl_vec extents;   // struct hl_mapping: every loaded segment, for hl_module_is_static
};
static struct hl_modules *hl_current_modules;

static void (*hl_tls_info)(size_t *size, size_t *align);  // ld.so's _dl_get_tls_static_info
static size_t hl_pthread_size = 2368;  // glibc 2.36's, if libc does not say
static const void *const *hl_swift_pool;  // libswiftCore's _swift_debug_allocationPoolPointer

enum { HL_MAX_ROOTS = 256 };
static struct { uintptr_t lo, hi; } hl_user_roots[HL_MAX_ROOTS];
static _Atomic int hl_user_roots_lock;

void hl_roots_init(void) {
  if (!hl_tls_info) hl_tls_info = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT,
                                                                      "_dl_get_tls_static_info");
  const unsigned *size = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
  if (size && *size >= 1024 && *size <= 65536) hl_pthread_size = *size;
  // The Swift runtime may be loaded later (dlopen): looked up again until it is found.
  if (!hl_swift_pool) hl_swift_pool = dlsym(RTLD_DEFAULT, "_swift_debug_allocationPoolPointer");
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg) {
  struct hl_modules *m = arg;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  int shim = strstr(name, "libheapline-preload") != NULL;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    struct hl_mapping seg = {info->dlpi_addr + ph->p_vaddr,
                             info->dlpi_addr + ph->p_vaddr + ph->p_memsz, 0};
    struct hl_mapping *e = hl_vec_push(&m->extents);
    if (e) *e = seg;
    if (!(ph->p_flags & PF_W) || shim) continue;
    struct hl_mapping *w = hl_vec_push(&m->writable);
    if (w) *w = seg;
  }
  (void)size;
  return 0;
}

static int peek_generation(struct dl_phdr_info *info, size_t size, void *arg) {
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs;
  return 1;
}

unsigned long long hl_modules_generation(void) {
  unsigned long long generation = 0;
  dl_iterate_phdr(peek_generation, &generation);
  return generation;
}

struct hl_modules *hl_modules_snapshot(unsigned long long *generation) {
  struct hl_modules *m = hl_map(sizeof *m);
  if (!m) return NULL;
  hl_vec_init(&m->writable, sizeof(struct hl_mapping));
  hl_vec_init(&m->extents, sizeof(struct hl_mapping));
  *generation = hl_modules_generation();
  dl_iterate_phdr(add_module, m);
  hl_roots_init();
  hl_current_modules = m;
  return m;
}

void hl_modules_release(struct hl_modules *m) {
  if (!m) return;
  if (hl_current_modules == m) hl_current_modules = NULL;
  hl_vec_free(&m->writable);
  hl_vec_free(&m->extents);
  hl_unmap(m, sizeof *m);
}

int hl_module_is_static(uintptr_t addr) {
  const struct hl_modules *m = hl_current_modules;
  for (size_t i = 0; m && i < m->extents.len; i++) {
    const struct hl_mapping *e = &HL_VEC_AT(&m->extents, struct hl_mapping, i);
    if (addr >= e->lo && addr < e->hi) return 1;
  }
  return 0;
}

void hl_roots_lock(void) { hl_spin_lock(&hl_user_roots_lock); }
void hl_roots_unlock(void) { hl_spin_unlock(&hl_user_roots_lock); }

int heapline_register_root(const void *start, size_t bytes) {
  if (!start || !bytes) return 22;  // EINVAL
  hl_roots_lock();
  int err = 28;  // ENOSPC: the table is full
  for (int i = 0; i < HL_MAX_ROOTS; i++)
    if (!hl_user_roots[i].lo) {
      hl_user_roots[i].lo = (uintptr_t)start;
      hl_user_roots[i].hi = (uintptr_t)start + bytes;
      err = 0;
      break;
    }
  hl_roots_unlock();
  return err;
}

void heapline_unregister_root(const void *start) {
  hl_roots_lock();
  for (int i = 0; i < HL_MAX_ROOTS; i++)
    if (hl_user_roots[i].lo == (uintptr_t)start) hl_user_roots[i].lo = hl_user_roots[i].hi = 0;
  hl_roots_unlock();
}

// Reads a word that may not be mapped: checked against /proc/self/maps first.
static int read_word(const struct hl_scan *s, uintptr_t addr, uint64_t *out) {
  const struct hl_mapping *m = hl_maps_find(&s->maps, addr);
  if (!m || !(m->flags & HL_MAP_R) || addr + 8 > m->hi || (addr & 7)) return 0;
  *out = *(const uint64_t *)addr;
  return 1;
}

// A thread's static TLS and thread descriptor (struct pthread, whose pthread_setspecific slots
// point to heap blocks), and its dynamic thread vector. Other threads' lie within their stack
// mapping; the main thread's do not.
static void scan_tls(struct hl_scan *s, uintptr_t tp, uintptr_t sp) {
  size_t size = 0, align = 0;
  if (hl_tls_info) hl_tls_info(&size, &align);
  if (!size || size > (64u << 20)) size = 4096;
  // On a thread's own stack mapping, [sp, top) is scanned already; the static TLS size is an
  // upper bound that would reach below sp, into dead frames.
  const struct hl_mapping *stack = hl_maps_find(&s->maps, sp);
  if (!stack || tp < stack->lo || tp >= stack->hi || tp < sp)
    hl_scan_root(s, tp > size ? tp - size : 0, tp + hl_pthread_size);
  // The thread descriptor points 16 bytes into the vector (glibc's INSTALL_DTV), which malloc
  // made for every thread but the main one: that pointer holds the block, whole.
  uint64_t dtv, slots;
  if (!read_word(s, tp + 8, &dtv) || !read_word(s, (uintptr_t)dtv - 16, &slots)) return;
  int interior;
  int64_t block = hl_index_lookup(&s->ix, (uintptr_t)dtv - 16, &interior);
  if (block >= 0 && !interior) hl_scan_mark_root_block(s, block);
  else if (slots < (1u << 20))
    hl_scan_root(s, (uintptr_t)dtv - 16, (uintptr_t)dtv + 16 * (slots + 1));
}

static void scan_stack(struct hl_scan *s, uintptr_t sp, int whole) {
  const struct hl_mapping *m = hl_maps_find(&s->maps, sp);
  if (!m) return;
  uintptr_t lo = whole ? m->lo : sp;
  hl_scan_root(s, lo, m->hi);
}

// A thread that did not answer the signal: /proc tells its stack pointer if it waits in a
// system call. Its registers are unknown, so its whole stack is scanned, dead frames too.
static void scan_unresponsive(struct hl_scan *s, int32_t tid) {
  char path[64] = "/proc/self/task/", text[256];
  size_t n = strlen(path);
  char digits[16];
  int d = 0;
  for (int32_t v = tid; v > 0 && d < 15; v /= 10) digits[d++] = (char)('0' + v % 10);
  while (d > 0) path[n++] = digits[--d];
  memcpy(path + n, "/syscall", 9);
  long fd = syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return;
  long len = syscall(SYS_read, fd, text, sizeof text - 1);
  syscall(SYS_close, fd);
  if (len <= 0) return;
  text[len] = 0;
  // "nr arg1 ... arg6 sp pc": the stack pointer is the second field from the end.
  const char *fields[16];
  int count = 0;
  for (char *p = text; *p && count < 16; p++)
    if (p == text || p[-1] == ' ') fields[count++] = p;
  if (count < 3) return;
  const char *p = fields[count - 2];
  if (p[0] != '0' || p[1] != 'x') return;
  uint64_t sp = 0;
  for (p += 2; (*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'f'); p++)
    sp = sp * 16 + (uint64_t)(*p <= '9' ? *p - '0' : *p - 'a' + 10);
  scan_stack(s, sp, 1);
}

// The Swift runtime's metadata allocator carves metadata out of pools it mallocs and never
// frees; each pool ends with a trailer {previous trailer, pool size} (MetadataReader.h,
// iterateMetadataAllocations). The runtime reaches its metadata only through pointers into the
// pools' middles, so the pools are roots: they hold what the runtime's caches hold.
static void scan_swift_pools(struct hl_scan *s) {
  uint64_t begin, remaining, trailer;
  uintptr_t pool = hl_swift_pool ? (uintptr_t)*hl_swift_pool : 0;
  if (!pool || !read_word(s, pool, &begin) || !read_word(s, pool + 8, &remaining)) return;
  trailer = begin + remaining;
  for (int n = 0; trailer && n < 1000000 && !hl_module_is_static(trailer); n++) {
    uint64_t previous, size;
    if (!read_word(s, trailer, &previous) || !read_word(s, trailer + 8, &size)) return;
    if (!size || size > (256u << 20) || size > trailer) return;
    uintptr_t start = trailer - size;
    int interior;
    int64_t block = hl_index_lookup(&s->ix, start, &interior);
    if (block >= 0) hl_scan_mark_root_block(s, block);
    else hl_scan_root(s, start, trailer + 16);
    trailer = previous;
  }
}

void hl_roots_scan(struct hl_scan *s, struct hl_modules *m, struct hl_world *w,
                   const uint64_t *self_regs, size_t nregs, uintptr_t self_sp, int untracked) {
  for (size_t i = 0; m && i < m->writable.len; i++) {
    const struct hl_mapping *seg = &HL_VEC_AT(&m->writable, struct hl_mapping, i);
    hl_scan_root(s, seg->lo, seg->hi);
  }
  for (int i = 0; i < HL_MAX_ROOTS; i++)
    if (hl_user_roots[i].lo) hl_scan_root(s, hl_user_roots[i].lo, hl_user_roots[i].hi);
  if (self_sp) {  // the scanning thread, when it is the program's (not the shim's own)
    hl_scan_root(s, (uintptr_t)self_regs, (uintptr_t)(self_regs + nregs));
    scan_stack(s, self_sp, 0);
    uint64_t tp;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
    scan_tls(s, tp, self_sp);
  }
  int32_t sampler = atomic_load(&hl_sampler_tid);
  for (uint32_t i = 0; i < w->capacity; i++) {
    struct hl_thread_state *t = &w->threads[i];
    if (!t->tid || t->tid == sampler || t->stopped == 2) continue;
    if (t->stopped == 0) {
      scan_unresponsive(s, t->tid);
      continue;
    }
    hl_scan_root(s, (uintptr_t)t->regs, (uintptr_t)(t->regs + HL_REGS));
    scan_stack(s, t->sp, 0);
    scan_tls(s, t->tp, t->sp);
  }
  scan_swift_pools(s);
  if (untracked) hl_heapwalk_scan(s, w);
}
