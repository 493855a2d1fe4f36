// The malloc family. Each wrapper calls glibc's allocator through its __libc_ entry points, so
// no dlsym bootstrap is needed and calls made before any constructor has run are served at once.
// Frees are recorded before the real free (the address may be reused the moment it returns) and
// allocations after the real call returns (there is no block before then).
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

extern void *__libc_malloc(size_t);
extern void __libc_free(void *);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);
extern void *__libc_valloc(size_t);
extern void *__libc_pvalloc(size_t);

void hl_lazy_init(void);
void hl_on_alloc(void *p, size_t size, const struct hl_entry *at);
void hl_on_free(void *p);
void hl_on_realloc(const struct hl_block *old, int had_old, void *p, size_t size,
                   const struct hl_entry *at);
void hl_defer_alloc(void *p, size_t size);
int hl_defer_free(void *p);

// The one check on every call: is this process recording, and is this thread outside the shim?
static inline int hl_should_record(void) {
  int s = atomic_load_explicit(&hl_state, memory_order_relaxed);
  if (HL_UNLIKELY(s == HL_UNINIT)) {
    hl_lazy_init();
    s = atomic_load_explicit(&hl_state, memory_order_relaxed);
  }
  return HL_UNLIKELY(s == HL_ON) && !hl_tls.guard && !hl_tls.internal;
}

// Each allocating wrapper is entered through a stub that passes, after the call's own
// arguments, where the program called it (struct hl_entry): its stack pointer, the slot of the
// return address, and its rbp and rbx, still untouched. The unwinder starts from there and
// never steps over the shim's own frames, which took a third of its time. The stub is the
// function's symbol; `impl` is hl_NAME_at, whose parameters end with the three.
#define HL_ENTRY_STUB(name, sp_reg, rbp_reg, rbx_reg)                            \
  __asm__(".section hl_text,\"ax\",@progbits\n"                                 \
          ".globl " #name "\n"                                                  \
          ".type " #name ", @function\n" #name ":\n"                            \
          "  .cfi_startproc\n"                                                  \
          "  mov %rsp, %" #sp_reg "\n"                                           \
          "  mov %rbp, %" #rbp_reg "\n"                                          \
          "  mov %rbx, %" #rbx_reg "\n"                                          \
          "  jmp hl_" #name "_at\n"                                              \
          "  .cfi_endproc\n"                                                    \
          ".size " #name ", .-" #name "\n"                                       \
          ".previous\n")
#define HL_ENTRY_IMPL HL_HOOK __attribute__((used, visibility("hidden")))
#define HL_AT uintptr_t sp, uintptr_t rbp, uintptr_t rbx
#define HL_ENTRY_OF &(struct hl_entry){sp, rbp, rbx}

// A call that comes while this thread is inside a shim event was made by a signal handler that
// interrupted the event: it is deferred to the event's end (events.c), never dropped.
HL_HOOK static inline void *hl_allocated(void *p, size_t size, const struct hl_entry *at) {
  if (HL_LIKELY(p != NULL)) {
    if (hl_should_record()) {
      if (HL_UNLIKELY(hl_sample_bytes)) hl_sample_alloc(p, size);
      else hl_on_alloc(p, size, at);
    }
    else if (HL_UNLIKELY(hl_tls.in_event) && !hl_tls.own && !hl_tls.internal) hl_defer_alloc(p, size);
  }
  return p;
}

// A block's bytes that the program has not written yet still hold what its chunk held before:
// the previous block's words, pointers among them. The leak scan reads every live block whole, to
// its usable end (Swift's arrays keep elements past what was asked for), and would follow them: a
// struct freed without its member, whose chunk the next malloc of its size got back, kept the
// member reachable through a word the new block never wrote (a leak nobody saw, as memcheck,
// which follows only written bytes, did), and stale words made chains and cycles of blocks that
// never pointed to each other. So every byte the program has not written is zeroed before it has
// the block, from `from` on: all of a new block, and what a resized one did not keep. A chunk
// that is a mapping of its own comes zeroed from the kernel, and so do the pages that a realloc
// adds to one (mremap), which zeroing would only fault in; but one that a realloc shrinks in
// place keeps its old words past the new size (`from` is then the size).
// Before glibc 2.34, MALLOC_CHECK_ made __libc_malloc keep a check byte past the requested
// bytes, which free verifies: there only the requested bytes are zeroed.
// A large run of bytes is zeroed by giving its whole pages back (MADV_DONTNEED: the heaps are
// private anonymous memory, which reads zero after it), not by writing them: glibc serves blocks
// up to 32 MiB from its heaps once a program has freed a mapped one, and a memset made every page
// of a 16 MiB block that the program never wrote resident (19 MB of RSS against 1.4 untraced).
enum { HL_GIVE_BACK_FROM = 64 * 1024 };
HL_HOOK static void hl_zero_large(char *at, uint64_t n) {
  char *lo = (char *)(((uintptr_t)at + 4095) & ~(uintptr_t)4095);
  char *hi = (char *)(((uintptr_t)at + n) & ~(uintptr_t)4095);
  int saved_errno = errno;
  if (hi - lo >= HL_GIVE_BACK_FROM && madvise(lo, (size_t)(hi - lo), MADV_DONTNEED) == 0) {
    memset(at, 0, (size_t)(lo - at));
    memset(hi, 0, (size_t)(at + n - hi));
  } else {
    memset(at, 0, n);
  }
  errno = saved_errno;
}

HL_HOOK static inline void *hl_cleared(void *p, uint64_t from, size_t size) {
  if (HL_UNLIKELY(p == NULL)) return p;
  if (HL_UNLIKELY(hl_chunk_is_mapped(hl_chunk_header(p))) && (from == 0 || from < size)) return p;
#if __GLIBC__ == 2 && __GLIBC_MINOR__ < 34
  uint64_t end = size;
#else
  uint64_t end = hl_usable_size(p);
  (void)size;
#endif
  if (HL_UNLIKELY(end > from + HL_GIVE_BACK_FROM)) hl_zero_large((char *)p + from, end - from);
  else if (end > from) memset((char *)p + from, 0, end - from);
  return p;
}

// What a realloc of `old` keeps: the old block's usable bytes, or all of `size` when fewer.
HL_HOOK static inline uint64_t hl_kept(void *old, size_t size) {
  uint64_t usable = old ? hl_usable_size(old) : 0;
  return usable < size ? usable : size;
}

HL_ENTRY_STUB(malloc, rsi, rdx, rcx);
HL_ENTRY_IMPL void *hl_malloc_at(size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.malloc(size);
  return hl_allocated(hl_cleared(__libc_malloc(size), 0, size), size, HL_ENTRY_OF);
}

HL_HOOK void free(void *p) {
  if (hl_foreign_allocator()) return hl_foreign.free(p);
  if (!p) return;
  if (hl_should_record()) {
    if (HL_UNLIKELY(hl_sample_bytes)) hl_sample_free(p);
    else hl_on_free(p);
  } else if (HL_UNLIKELY(hl_tls.in_event) && !hl_tls.own && !hl_tls.internal && hl_defer_free(p))
    return;  // freed once the event it interrupted is written
  __libc_free(p);
}

HL_ENTRY_STUB(calloc, rdx, rcx, r8);
HL_ENTRY_IMPL void *hl_calloc_at(size_t n, size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.calloc(n, size);
  // glibc's calloc zeroes the whole usable size. No overflow: calloc checked it.
  return hl_allocated(__libc_calloc(n, size), n * size, HL_ENTRY_OF);
}

// A failed realloc leaves its block as it was: back into the live table it goes.
HL_HOOK void hl_live_put_back(const struct hl_block *blk) {
  hl_tls.guard++;
  int ignored;
  hl_live_insert(blk, NULL, &ignored);
  hl_tls.guard--;
}

// realloc from a signal handler inside an event: a new block, a copy, and a deferred free, so
// that the old address stays taken until the event has recorded its end.
HL_HOOK static void *hl_realloc_deferred(void *old, size_t size) {
  if (size == 0) {
    free(old);
    return NULL;
  }
  void *p = malloc(size);
  if (!p) return NULL;
  size_t have = malloc_usable_size(old);
  memcpy(p, old, have < size ? have : size);
  free(old);
  return p;
}

HL_ENTRY_STUB(realloc, rdx, rcx, r8);
HL_ENTRY_IMPL void *hl_realloc_at(void *old, size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.realloc(old, size);
  if (HL_UNLIKELY(hl_tls.in_event) && !hl_tls.own && !hl_tls.internal && old) return hl_realloc_deferred(old, size);
  if (!hl_should_record()) {
    uint64_t kept = hl_kept(old, size);
    return hl_cleared(__libc_realloc(old, size), kept, size);
  }
  if (!old) return hl_malloc_at(size, sp, rbp, rbx);
  if (HL_UNLIKELY(hl_sample_bytes)) {
    if (size) {
      uint64_t kept = hl_kept(old, size);
      return hl_cleared(hl_sample_realloc(old, size), kept, size);
    }
    free(old);  // what glibc's realloc(p, 0) does
    return NULL;
  }
  if (size == 0) {  // glibc frees the block and returns NULL
    hl_on_free(old);
    return __libc_realloc(old, 0);
  }
  // Take the old block out first: once the real realloc returns, another thread may be given
  // the same address. If the realloc fails, the old block is still there, so put it back.
  uint64_t kept = hl_kept(old, size);
  hl_tls.guard++;
  struct hl_block blk;
  int had = hl_live_remove((uint64_t)(uintptr_t)old, &blk);
  hl_tls.guard--;
  void *p = __libc_realloc(old, size);
  if (!p) {
    if (had) hl_live_put_back(&blk);
    return NULL;
  }
  hl_cleared(p, kept, size);
  hl_on_realloc(&blk, had, p, size, HL_ENTRY_OF);
  return p;
}

HL_ENTRY_STUB(reallocarray, rcx, r8, r9);
HL_ENTRY_IMPL void *hl_reallocarray_at(void *old, size_t n, size_t size, HL_AT) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return NULL;
  }
  return hl_realloc_at(old, bytes, sp, rbp, rbx);
}

HL_ENTRY_STUB(memalign, rdx, rcx, r8);
HL_ENTRY_IMPL void *hl_memalign_at(size_t alignment, size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.memalign(alignment, size);
  return hl_allocated(hl_cleared(__libc_memalign(alignment, size), 0, size), size,
                      HL_ENTRY_OF);
}

// Exactly what the glibc this is built for does: up to 2.37 aligned_alloc is memalign, which
// rounds any alignment up to a power of two; from 2.38 it refuses one that is not.
HL_ENTRY_STUB(aligned_alloc, rdx, rcx, r8);
HL_ENTRY_IMPL void *hl_aligned_alloc_at(size_t alignment, size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.aligned_alloc(alignment, size);
#if __GLIBC__ == 2 && __GLIBC_MINOR__ >= 38
  if (alignment == 0 || (alignment & (alignment - 1))) {
    errno = EINVAL;
    return NULL;
  }
#endif
  return hl_memalign_at(alignment, size, sp, rbp, rbx);
}

HL_ENTRY_STUB(posix_memalign, rcx, r8, r9);
HL_ENTRY_IMPL int hl_posix_memalign_at(void **out, size_t alignment, size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.posix_memalign(out, alignment, size);
  if (alignment < sizeof(void *) || (alignment & (alignment - 1))) return EINVAL;
  void *p = __libc_memalign(alignment, size);
  if (!p) return ENOMEM;  // with errno as glibc's own leaves it: ENOMEM
  *out = hl_allocated(hl_cleared(p, 0, size), size, HL_ENTRY_OF);
  return 0;
}

HL_ENTRY_STUB(valloc, rsi, rdx, rcx);
HL_ENTRY_IMPL void *hl_valloc_at(size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.valloc(size);
  return hl_allocated(hl_cleared(__libc_valloc(size), 0, size), size, HL_ENTRY_OF);
}

HL_ENTRY_STUB(pvalloc, rsi, rdx, rcx);
HL_ENTRY_IMPL void *hl_pvalloc_at(size_t size, HL_AT) {
  if (hl_foreign_allocator()) return hl_foreign.pvalloc(size);
  return hl_allocated(hl_cleared(__libc_pvalloc(size), 0, size), size, HL_ENTRY_OF);
}
