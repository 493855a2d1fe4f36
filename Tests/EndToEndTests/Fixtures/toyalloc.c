// An allocator of its own in a shared library, as jemalloc, tcmalloc and mimalloc are: it
// defines the malloc family and, as tcmalloc and mimalloc do, glibc's __libc_ entry points.
// Blocks come from one mapping, one after another, each after a header with a mark and its
// size; none is reused. A block that is not its own (glibc's), given to free, realloc or
// malloc_usable_size, aborts the program, as such an allocator may crash.
// Built as a shared library; toy_served() says how many blocks it has handed out. Built with
// -DTOY_PARTIAL, it defines malloc, free, calloc, realloc and malloc_usable_size only, as some
// allocators do: the program's other calls go to glibc's.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { ARENA = 1 << 28, MARK = 0x70790b10 };
struct header {
  uint32_t mark, pad;
  uint64_t size;
};
static char *arena;
static _Atomic uint64_t used, served;

static struct header *header_of(void *p) {
  struct header *h = (struct header *)p - 1;
  if ((char *)h < arena || (char *)h >= arena + ARENA || h->mark != MARK) abort();
  return h;
}

static void *take(size_t alignment, size_t size) {
  if (!arena) {  // the first call comes from the dynamic linker, with one thread
    arena = mmap(NULL, ARENA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
    if (arena == MAP_FAILED) abort();
  }
  if (alignment < 16) alignment = 16;
  uint64_t need = (size + sizeof(struct header) + 2 * alignment + 15) & ~(uint64_t)15;
  uint64_t at = atomic_fetch_add(&used, need);
  if (at + need > ARENA) {
    errno = ENOMEM;
    return NULL;
  }
  uintptr_t start = (uintptr_t)arena + at + sizeof(struct header);
  start = (start + alignment - 1) & ~(uintptr_t)(alignment - 1);
  struct header *h = (struct header *)start - 1;
  h->mark = MARK;
  h->size = size;
  atomic_fetch_add(&served, 1);
  return (void *)start;
}

unsigned long toy_served(void) { return served; }
void *malloc(size_t size) { return take(16, size); }
void free(void *p) {
  if (p) header_of(p);
}
void *calloc(size_t n, size_t size) {
  size_t bytes;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return NULL;
  }
  return take(16, bytes);  // the mapping's pages are zero, and never reused
}
void *realloc(void *old, size_t size) {
  void *p = take(16, size);
  if (p && old) {
    size_t had = header_of(old)->size;
    memcpy(p, old, had < size ? had : size);
  }
  return p;
}
size_t malloc_usable_size(void *p) { return p ? header_of(p)->size : 0; }
#ifndef TOY_PARTIAL
void *memalign(size_t alignment, size_t size) { return take(alignment, size); }
void *aligned_alloc(size_t alignment, size_t size) { return take(alignment, size); }
int posix_memalign(void **out, size_t alignment, size_t size) {
  void *p = take(alignment, size);
  if (!p) return ENOMEM;
  *out = p;
  return 0;
}
void *__libc_malloc(size_t size) { return malloc(size); }
void __libc_free(void *p) { free(p); }
void *__libc_calloc(size_t n, size_t size) { return calloc(n, size); }
void *__libc_realloc(void *old, size_t size) { return realloc(old, size); }
void *__libc_memalign(size_t alignment, size_t size) { return memalign(alignment, size); }
#endif
