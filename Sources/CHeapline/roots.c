// The roots of the leak scan: the writable segments of loaded modules (not the preload
// library's: it holds the shim's table pointers, never the program's; nor the bins of malloc's
// main arena in libc's: heapwalk.c says why), every thread's registers, stack (from its stack
// pointer up: below it, even in the red zone, lie stale copies of pointers that calls left
// behind, which would hide leaks, as LeakSanitizer also finds) and static TLS, regions the
// program registered, and the Swift runtime's metadata pools; then every other writable private
// mapping (rootmaps.c), less what was scanned here and the stacks' dead frames. Module segments
// and symbols are looked up before the world stops, since dl_iterate_phdr and dlsym take the
// loader's lock.
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
  struct hl_vec extents;   // struct hl_mapping: every loaded segment
  struct hl_mapping libc;  // libc's writable segment, which holds malloc's main arena
};

static void (*hl_tls_info)(size_t *size, size_t *align);  // ld.so's _dl_get_tls_static_info
static size_t hl_pthread_size = 2368;  // glibc 2.36's, if libc does not say
static uintptr_t hl_libc_base;  // where libc is loaded
static uint64_t hl_pool_size;  // the Swift runtime's metadata pool size, once it is loaded
static struct { uintptr_t lo, hi; } hl_slow_alloc, hl_alloc_object;  // two of its functions

enum { HL_MAX_ROOTS = 256 };
static struct { uintptr_t lo, hi; } hl_user_roots[HL_MAX_ROOTS];
static _Atomic int hl_user_roots_lock;

// A function's address range, from its dynamic symbol.
int hl_function_range(const char *name, uintptr_t *lo, uintptr_t *hi) {
  void *address = dlsym(RTLD_DEFAULT, name);
  Dl_info info;
  const ElfW(Sym) *symbol = NULL;
  if (!address || !dladdr1(address, &info, (void **)&symbol, RTLD_DL_SYMENT) || !symbol)
    return 0;
  *lo = (uintptr_t)address;
  *hi = (uintptr_t)address + symbol->st_size;
  return symbol->st_size > 0;
}

extern void *__libc_malloc(size_t);

void hl_roots_init(void) {
  Dl_info libc;
  if (!hl_libc_base && dladdr((void *)__libc_malloc, &libc)) hl_libc_base = (uintptr_t)libc.dli_fbase;
  if (!hl_tls_info) hl_tls_info = (void (*)(size_t *, size_t *))dlsym(RTLD_DEFAULT,
                                                                      "_dl_get_tls_static_info");
  const unsigned *size = dlsym(RTLD_DEFAULT, "_thread_db_sizeof_pthread");
  if (size && *size >= 1024 && *size <= 65536) hl_pthread_size = *size;
  // The Swift runtime may be loaded later (dlopen): looked up again until it is found.
  const uint64_t *pool = hl_pool_size ? NULL : dlsym(RTLD_DEFAULT, "_swift_debug_metadataAllocatorPageSize");
  if (pool && hl_function_range("swift_slowAlloc", &hl_slow_alloc.lo, &hl_slow_alloc.hi) &&
      hl_function_range("swift_allocObject", &hl_alloc_object.lo, &hl_alloc_object.hi))
    hl_pool_size = *pool;
}

static int add_module(struct dl_phdr_info *info, size_t size, void *arg) {
  struct hl_modules *m = arg;
  const char *name = info->dlpi_name ? info->dlpi_name : "";
  // The shim's own data holds what it copied from the program (a signal mask with stale bytes
  // held a block's address): not a root. Found by its code, since HEAPLINE_PRELOAD may name a
  // copy of the library by any name.
  int shim = hl_is_preload_library(info) || strstr(name, "libheapline-preload") != NULL;
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
    if (info->dlpi_addr == hl_libc_base) m->libc = seg;
  }
  (void)size;
  return 0;
}

struct hl_modules *hl_modules_snapshot(void) {
  struct hl_modules *m = hl_map(sizeof *m);
  if (!m) return NULL;
  hl_vec_init(&m->writable, sizeof(struct hl_mapping));
  hl_vec_init(&m->extents, sizeof(struct hl_mapping));
  hl_roots_init();
  dl_iterate_phdr(add_module, m);
  return m;
}

void hl_modules_release(struct hl_modules *m) {
  if (!m) return;
  hl_vec_free(&m->writable);
  hl_vec_free(&m->extents);
  hl_unmap(m, sizeof *m);
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

// Reads a word that may not be mapped (the scan's own memory moves meanwhile).
static int read_word(const struct hl_scan *s, uintptr_t addr, uint64_t *out) {
  const struct hl_mapping *m = hl_maps_find(&s->maps, addr);
  if (!m || !(m->flags & HL_MAP_R) || addr + 8 > m->hi || (addr & 7)) return 0;
  return hl_safe_read(addr, out, sizeof *out);
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

static void add_dead(struct hl_vec *dead, uintptr_t lo, uintptr_t hi) {
  struct hl_mapping *r = lo < hi ? hl_vec_push(dead) : NULL;
  if (r) *r = (struct hl_mapping){lo, hi, 0};
}

// A stack's frames below `sp` (all of it when sp is 0), which the mapping pass must not take
// for the program's memory: they hold stale copies of pointers. The stack ends at its thread's
// descriptor, as scan_stack says.
static void add_dead_frames(struct hl_scan *s, struct hl_vec *dead, uintptr_t in, uintptr_t sp,
                            uintptr_t tp) {
  const struct hl_mapping *m = hl_maps_find(&s->maps, in);
  if (!m) return;
  uintptr_t top = tp > in && tp < m->hi && tp + hl_pthread_size < m->hi ? tp + hl_pthread_size
                                                                          : m->hi;
  add_dead(dead, m->lo, sp ? sp : top);
}

// Threads that have exited leave their stack in glibc's cache, thread descriptor included, until
// a new thread reuses it; the descriptor still points to its DTV, a malloc block that glibc
// frees only then. That block is glibc's, not a leak; the dead stack and TLS themselves are stale
// and not scanned. A cached stack is a writable mapping just above a guard page, holding no
// live thread's stack pointer, whose top holds a descriptor that points to itself.
static void scan_cached_stacks(struct hl_scan *s, const struct hl_world *w, uintptr_t self_sp,
                               struct hl_vec *dead) {
  size_t size = 0, align = 0;
  if (hl_tls_info) hl_tls_info(&size, &align);
  if (!align || (align & (align - 1))) align = 64;
  const struct hl_mapping *maps = (const struct hl_mapping *)s->maps.data;
  for (size_t i = 1; i < s->maps.len; i++) {
    const struct hl_mapping *m = &maps[i], *guard = &maps[i - 1];
    if (guard->hi != m->lo || (guard->flags & (HL_MAP_R | HL_MAP_W | HL_MAP_X)) ||
        (m->flags & (HL_MAP_R | HL_MAP_W | HL_MAP_FILE)) != (HL_MAP_R | HL_MAP_W) ||
        m->hi - m->lo < hl_pthread_size + 4096 || (self_sp >= m->lo && self_sp < m->hi))
      continue;
    int live = 0;
    for (uint32_t u = 0; u < w->used_count && !live; u++) {
      uint64_t sp = w->threads[w->used[u]].sp;
      live = sp >= m->lo && sp < m->hi;
    }
    uintptr_t tp = (m->hi - hl_pthread_size) & ~(uintptr_t)(align - 1);
    uint64_t self, header, dtv;
    if (live || !read_word(s, tp, &header) || !read_word(s, tp + 16, &self) || header != tp ||
        self != tp || !read_word(s, tp + 8, &dtv))
      continue;
    add_dead(dead, m->lo, m->hi);
    int interior;
    int64_t block = hl_index_lookup(&s->ix, (uintptr_t)dtv - 16, &interior);
    if (block >= 0 && !interior) hl_scan_mark_root_block(s, block);
  }
}

// A thread's stack, from `sp` up. glibc puts a thread's descriptor (at its thread pointer `tp`)
// at the top of its stack, which therefore ends there: the mapping may go on above, merged by
// the kernel with whatever was mapped next to it. The main thread's descriptor lies elsewhere;
// its stack is the [stack] mapping.
static void scan_stack(struct hl_scan *s, uintptr_t sp, uintptr_t tp, int whole) {
  const struct hl_mapping *m = hl_maps_find(&s->maps, sp);
  if (!m) return;
  uintptr_t lo = whole ? m->lo : sp, hi = m->hi;
  if (tp > sp && tp < m->hi && tp + hl_pthread_size < m->hi) hi = tp + hl_pthread_size;
  // A stack that malloc gave (a coroutine's, a signal stack) ends where its block does: past
  // it lie other blocks of the heap, which are no roots.
  int interior;
  int64_t j = hl_index_lookup(&s->ix, sp, &interior);
  if (j >= 0) {
    if (whole) lo = hl_sblock_addr(&s->ix.blocks[j]);
    hi = hl_sblock_end(&s->ix.blocks[j]);
  }
  hl_scan_root(s, lo, hi);
}

// Where a stopped thread left its own stack for one of the shim's (hl_aside: unwinding), or 0.
// Its stack pointer is on the shim's stack then, and its own stack was scanned by no one: the
// blocks that only its frames held were definitely lost (a scan every 10 ms of node's worker
// threads, whose stacks went to libunwind: 13 scans in 375; of a C churn's two threads with
// libunwind checking every stack, thousands of blocks in 4 scans in 155). Its static TLS lies
// at the same offset from its thread pointer as the scanner's.
static uintptr_t left_stack_at(const struct hl_scan *s, const struct hl_thread_state *t,
                               uintptr_t self_tp) {
  uint64_t left = 0;
  uintptr_t at = t->tp + ((uintptr_t)&hl_tls.aside_sp - self_tp);
  if (!t->tp || !read_word(s, at, &left) || !left) return 0;
  const struct hl_mapping *own = hl_maps_find(&s->maps, (uintptr_t)left);
  if (!own || (t->sp >= own->lo && t->sp < own->hi)) return 0;  // back on its own stack
  // Its own stack holds its descriptor at the top, or is [stack]: a thread that some other
  // code started with a TLS of its own has no such word there, and its value is no stack's.
  if (!(own->flags & HL_MAP_STACK) && !(t->tp > left && t->tp < own->hi)) return 0;
  return (uintptr_t)left;
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
  scan_stack(s, sp, 0, 1);
}

// Swift's metadata allocator (Metadata.cpp, MetadataAllocator::Allocate) carves metadata and
// its caches out of 16 KiB pools that it gets from swift_slowAlloc and never frees. The runtime
// reaches them only through pointers into their middles (its AllocationPool, cache entries), so
// they would be possibly lost, though they are the runtime's own: a block of the pool size
// (_swift_debug_metadataAllocatorPageSize) that swift_slowAlloc made for a caller inside
// libswiftCore other than swift_allocObject is a root. (The runtime chains its pools with
// trailers only under SWIFT_DEBUG_ENABLE_METADATA_ALLOCATION_ITERATION.)
static void scan_swift_pools(struct hl_scan *s, const struct hl_modules *m) {
  if (!hl_pool_size || !hl_slow_alloc.lo) return;
  struct hl_mapping core = {0, 0, 0};  // libswiftCore's code segment
  for (size_t i = 0; m && i < m->extents.len; i++) {
    const struct hl_mapping *e = &HL_VEC_AT(&m->extents, struct hl_mapping, i);
    if (hl_slow_alloc.lo >= e->lo && hl_slow_alloc.lo < e->hi) core = *e;
  }
  struct hl_vec found;  // block indices, then their stack ids, frames and parents
  hl_vec_init(&found, sizeof(uint64_t[4]));
  for (uint32_t j = 0; j < s->ix.count; j++) {
    if (s->ix.blocks[j].size != hl_pool_size) continue;
    struct hl_block blk;
    hl_live_block_at(s->ix.blocks[j].ref, &blk);
    uint64_t *f = hl_vec_push(&found);
    if (f) f[0] = j, f[1] = blk.stack;
  }
  uint32_t ids[64], parents[64];
  uintptr_t pcs[64];
  for (size_t base = 0; base < found.len; base += 64) {  // two passes: a frame, then its caller
    size_t n = found.len - base < 64 ? found.len - base : 64;
    uint64_t (*f)[4] = (uint64_t (*)[4])found.data + base;
    for (size_t k = 0; k < n; k++) ids[k] = (uint32_t)f[k][1];
    hl_stacks_lookup_locked(ids, n, pcs, parents);
    for (size_t k = 0; k < n; k++) f[k][2] = pcs[k], ids[k] = parents[k];
    hl_stacks_lookup_locked(ids, n, pcs, parents);
    for (size_t k = 0; k < n; k++) {
      uintptr_t frame0 = f[k][2], frame1 = pcs[k];
      int from_runtime = frame0 > hl_slow_alloc.lo && frame0 <= hl_slow_alloc.hi &&
                         frame1 > core.lo && frame1 <= core.hi &&
                         !(frame1 > hl_alloc_object.lo && frame1 <= hl_alloc_object.hi);
      if (from_runtime) hl_scan_mark_root_block(s, (int64_t)f[k][0]);
    }
  }
  hl_vec_free(&found);
}

// The [stack] mapping: the main thread's stack, and the process's arguments above it.
static const struct hl_mapping *main_stack(const struct hl_scan *s) {
  const struct hl_mapping *maps = (const struct hl_mapping *)s->maps.data;
  for (size_t i = 0; i < s->maps.len; i++)
    if (maps[i].flags & HL_MAP_STACK) return &maps[i];
  return NULL;
}

// The main thread's stack is the [stack] mapping, which the mapping pass leaves to the thread's
// own scan. When the main thread runs elsewhere (on a coroutine's stack, or a signal stack),
// that scan covers where it is, and its frames on [stack], below the context it left, would be
// scanned by no one: the whole mapping is a root then, as every other thread's stack mapping
// is in the mapping pass.
static void scan_main_stack_left(struct hl_scan *s, const struct hl_world *w, int self_is_main) {
  int32_t pid = (int32_t)getpid();
  uintptr_t sp = self_is_main ? w->self_sp : 0;
  for (uint32_t u = 0; !self_is_main && u < w->used_count; u++) {
    const struct hl_thread_state *t = &w->threads[w->used[u]];
    if (t->tid == pid && t->stopped == HL_THREAD_STOPPED) sp = t->sp;
  }
  if (!sp) return;  // gone, or not stopped: its stack holds nothing live, or was scanned whole
  const struct hl_mapping *stack = main_stack(s);
  if (stack && (sp < stack->lo || sp >= stack->hi)) {
    s->root_kind = HL_ROOT_STACK;
    s->root_tid = pid;
    hl_scan_root(s, stack->lo, stack->hi);
  }
}

extern void *__libc_stack_end;  // ld.so's: the stack pointer the process started with, at argc

// The process's argument, environment and auxiliary vectors lie on [stack] above the first
// frame: argc, argv[] and its NULL, envp[] and its NULL (unsetenv moves the NULL down, leaving
// NULLs after it), then the auxiliary vector up to AT_NULL. They are live for the process's
// whole life, whatever its main thread does, but were scanned only as part of that thread's
// stack: once main had returned (or the main thread had exited), a block that `environ` or
// `argv` held was definitely lost (`environ[0] = strdup(...)`, read by an atexit handler;
// memcheck: still reachable). Only the vectors: above them, the kernel leaves a random gap of
// up to 8 KiB before the strings, which hold no pointers.
static void scan_process_arguments(struct hl_scan *s) {
  const uint64_t *v = __libc_stack_end;
  const struct hl_mapping *stack = main_stack(s);
  if (!v || !stack || (uintptr_t)v < stack->lo || (uintptr_t)v >= stack->hi) return;
  const uint64_t *end = (const uint64_t *)stack->hi;
  if (v[0] >= (uint64_t)(end - v)) return;
  const uint64_t *w = v + 1 + v[0] + 1;  // past argc, argv[] and its NULL
  while (w < end && *w) w++;             // envp[]
  while (w < end && !*w) w++;            // its NULL, and those unsetenv left
  while (w + 1 < end && *w) w += 2;      // the auxiliary vector's pairs
  if (w + 1 >= end) return;
  s->root_kind = HL_ROOT_STACK;
  s->root_tid = (int32_t)getpid();
  hl_scan_root(s, (uintptr_t)v, (uintptr_t)(w + 2));  // AT_NULL's pair too
}

void hl_roots_scan(struct hl_scan *s, struct hl_modules *m, struct hl_world *w,
                   const uint64_t *self_regs, size_t nregs, uintptr_t self_sp, int self_tls,
                   int untracked) {
  s->record = 1;  // for the mapping pass, which leaves out what was scanned already
  s->root_kind = HL_ROOT_GLOBAL;  // each kind of root is named so in the graph (--graph)
  for (size_t i = 0; m && i < m->writable.len; i++) {
    const struct hl_mapping *seg = &HL_VEC_AT(&m->writable, struct hl_mapping, i);
    uintptr_t from, to;  // malloc's own pointers to chunk headers are no references
    if (seg->lo == m->libc.lo && hl_main_arena_chunk_pointers(seg->lo, seg->hi, &from, &to)) {
      hl_scan_root(s, seg->lo, from);
      hl_scan_root(s, to, seg->hi);
    } else {
      hl_scan_root(s, seg->lo, seg->hi);
    }
  }
  s->root_kind = HL_ROOT_REGION;
  for (int i = 0; i < HL_MAX_ROOTS; i++)
    if (hl_user_roots[i].lo) hl_scan_root(s, hl_user_roots[i].lo, hl_user_roots[i].hi);
  if (self_tls) {  // the scanning thread, when it is the program's (not the shim's own)
    uint64_t tp;
    __asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
    s->root_tid = (int32_t)syscall(SYS_gettid);
    if (self_sp) {  // at exit, from the frame that called exit; none once main returned
      s->root_kind = HL_ROOT_REGISTERS;
      hl_scan_registers(s, self_regs, nregs);
      s->root_kind = HL_ROOT_STACK;
      scan_stack(s, self_sp, tp, 0);
    }
    s->root_kind = HL_ROOT_TLS;
    scan_tls(s, tp, self_sp);  // its thread-locals and pthread_setspecific data live on
  }
  scan_main_stack_left(s, w, self_tls && syscall(SYS_gettid) == getpid());
  scan_process_arguments(s);
  int32_t sampler = atomic_load(&hl_sampler_tid);
  struct hl_vec dead;  // stack frames that the mapping pass must leave alone
  hl_vec_init(&dead, sizeof(struct hl_mapping));
  uint64_t self_tp;
  __asm__ volatile("mov %%fs:0, %0" : "=r"(self_tp));
  add_dead_frames(s, &dead, w->self_sp, self_tls ? self_sp : 0, self_tp);
  int sampler_seen = 0;
  for (uint32_t u = 0; u < w->used_count; u++) {
    struct hl_thread_state *t = &w->threads[w->used[u]];
    sampler_seen |= t->tid == sampler;
    if (t->stopped == HL_THREAD_STOPPED && t->sp)
      add_dead_frames(s, &dead, t->sp, t->tid == sampler ? 0 : t->sp, t->tp);
    if (t->tid == sampler || t->stopped == HL_THREAD_GONE) continue;
    s->root_tid = t->tid;
    if (t->stopped != HL_THREAD_STOPPED) {
      s->root_kind = HL_ROOT_STACK;
      scan_unresponsive(s, t->tid);
      continue;
    }
    s->root_kind = HL_ROOT_REGISTERS;
    hl_scan_registers(s, t->regs, HL_REGS);
    s->root_kind = HL_ROOT_STACK;
    scan_stack(s, t->sp, t->tp, 0);
    uintptr_t left = left_stack_at(s, t, self_tp);
    if (left) {
      scan_stack(s, left, t->tp, 0);
      add_dead_frames(s, &dead, left, left, t->tp);
    }
    s->root_kind = HL_ROOT_TLS;
    scan_tls(s, t->tp, t->sp);
  }
  s->root_tid = 0;
  if (sampler && !sampler_seen)  // not stopped (signals: sampler.c blocks them), nor a root
    add_dead_frames(s, &dead, hl_sampler_frame, 0, hl_sampler_tp);
  s->root_kind = HL_ROOT_RUNTIME;
  scan_cached_stacks(s, w, self_sp, &dead);
  s->root_kind = HL_ROOT_MAPPING;
  int mapped = m && hl_mapping_roots_scan(s, &m->extents, &dead);
  hl_vec_free(&dead);
  s->record = 0;
  s->root_kind = HL_ROOT_RUNTIME;
  scan_swift_pools(s, m);
  s->root_kind = HL_ROOT_HEAP;
  if (untracked) hl_heapwalk_scan(s, w, !mapped);
}
