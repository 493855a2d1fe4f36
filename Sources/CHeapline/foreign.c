// The process's allocator when it is not glibc's: a library after this one in the symbol search
// order that defines malloc before glibc does (jemalloc, tcmalloc or mimalloc, linked in or
// preloaded). The shim's entry points come first in that order, and they served every call from
// glibc's heap, so the program's own allocator was bypassed. Worse, its calls that the shim does
// not wrap (malloc_usable_size) reached that allocator with glibc's blocks, and tcmalloc and
// mimalloc define glibc's __libc_ entry points too, so the shim read glibc's chunk header of
// one of their blocks: every such program crashed. The shim reads and clears glibc's chunks and
// walks glibc's heap, so it does not trace another allocator: it steps aside, passing every call
// on to that allocator, and `record` says why there is no trace.
//
// Decided at the first call that reaches an entry point, which may come before any constructor,
// from inside the dynamic linker: so by reading the loaded objects' symbol tables, through the
// debugger's list of them, with no lock and no allocation.
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

struct hl_foreign hl_foreign;
_Atomic int hl_allocator;  // enum hl_allocator_kind

// An address in a dynamic section: the dynamic linker relocates most in place, not the vDSO's.
static const void *dyn_address(const struct link_map *m, ElfW(Addr) p) {
  return (const void *)(p < m->l_addr ? m->l_addr + p : p);
}

static int defines(const ElfW(Sym) *s, const char *strtab, const char *name) {
  int type = ELF64_ST_TYPE(s->st_info);
  return s->st_shndx != SHN_UNDEF && (type == STT_FUNC || type == STT_GNU_IFUNC) &&
         ELF64_ST_BIND(s->st_info) != STB_LOCAL && strcmp(strtab + s->st_name, name) == 0;
}

// The address of the function `name` that object `m` defines, or NULL.
static void *symbol(const struct link_map *m, const char *name) {
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const uint32_t *gnu = NULL, *sysv = NULL;
  for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_SYMTAB) symtab = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_STRTAB) strtab = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_GNU_HASH) gnu = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_HASH) sysv = dyn_address(m, d->d_un.d_ptr);
  }
  if (!symtab || !strtab) return NULL;
  const ElfW(Sym) *found = NULL;
  if (gnu) {
    uint32_t buckets = gnu[0], offset = gnu[1], words = gnu[2], h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = h * 33 + *c;
    const uint32_t *bucket = (const uint32_t *)((const ElfW(Addr) *)&gnu[4] + words);
    const uint32_t *chain = bucket + buckets;
    for (uint32_t i = bucket[h % buckets]; i >= offset && !found; i++) {
      uint32_t link = chain[i - offset];
      if ((link | 1) == (h | 1) && defines(&symtab[i], strtab, name)) found = &symtab[i];
      if (link & 1) break;
    }
  } else if (sysv) {
    uint32_t buckets = sysv[0], h = 0;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) {
      h = (h << 4) + *c;
      h = (h ^ ((h & 0xf0000000u) >> 24)) & 0x0fffffffu;
    }
    const uint32_t *chain = &sysv[2 + buckets];
    for (uint32_t i = sysv[2 + h % buckets]; i != STN_UNDEF && !found; i = chain[i])
      if (defines(&symtab[i], strtab, name)) found = &symtab[i];
  }
  if (!found) return NULL;
  void *at = (void *)(m->l_addr + found->st_value);
  if (ELF64_ST_TYPE(found->st_info) == STT_GNU_IFUNC) at = ((void *(*)(void))at)();
  return at;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// glibc's own, and its debugging malloc, which wraps glibc's chunks.
static int is_glibc(const char *name) {
  return !strncmp(name, "libc.so", 7) || !strncmp(name, "libc_malloc_debug.so", 20);
}

// Fallbacks for what an allocator does not define, from what it does.
static void *aligned_by_posix(size_t alignment, size_t size) {
  void *p = NULL;
  return hl_foreign.posix_memalign(&p, alignment, size) == 0 ? p : NULL;
}
static void *page_aligned(size_t size) {
  return hl_foreign.memalign((size_t)sysconf(_SC_PAGESIZE), size);
}
static void *pages_aligned(size_t size) {
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return hl_foreign.memalign(page, (size + page - 1) & ~(page - 1));
}

// Fills hl_foreign from `m`; 0 when it lacks what the others cannot make up.
static int take(const struct link_map *m) {
  struct hl_foreign f = {
      .malloc = symbol(m, "malloc"), .free = symbol(m, "free"), .calloc = symbol(m, "calloc"),
      .realloc = symbol(m, "realloc"), .memalign = symbol(m, "memalign"),
      .aligned_alloc = symbol(m, "aligned_alloc"), .posix_memalign = symbol(m, "posix_memalign"),
      .valloc = symbol(m, "valloc"), .pvalloc = symbol(m, "pvalloc")};
  if (!f.malloc || !f.free || !f.calloc || !f.realloc) return 0;
  if (!f.memalign) f.memalign = f.posix_memalign ? aligned_by_posix : f.aligned_alloc;
  if (!f.memalign) return 0;
  if (!f.aligned_alloc) f.aligned_alloc = f.memalign;
  if (!f.valloc) f.valloc = page_aligned;
  if (!f.pvalloc) f.pvalloc = pages_aligned;
  const char *name = base_name(m->l_name);
  size_t n = strlen(name) < sizeof f.name - 1 ? strlen(name) : sizeof f.name - 1;
  memcpy(f.name, name, n);
  hl_foreign = f;  // posix_memalign may stay NULL: hooks.c makes it up from memalign
  return 1;
}

static int resolve(void) {
  const struct link_map *self = _r_debug.r_map;
  while (self && self->l_ld != _DYNAMIC) self = self->l_next;
  for (const struct link_map *m = self ? self->l_next : NULL; m; m = m->l_next) {
    // Another copy of the shim (the preload library, after a program that links the module) is
    // glibc's allocator too: control.c settles which copy records
    if (!m->l_name || !symbol(m, "malloc") || symbol(m, "heapline_start")) continue;
    return !is_glibc(base_name(m->l_name)) && take(m) ? HL_ALLOC_FOREIGN : HL_ALLOC_GLIBC;
  }
  return HL_ALLOC_GLIBC;
}

int hl_foreign_allocator_slow(void) {
  int kind = atomic_load_explicit(&hl_allocator, memory_order_acquire);
  if (kind == HL_ALLOC_UNKNOWN) {
    kind = resolve();  // the same answer from any thread that races here
    atomic_store_explicit(&hl_allocator, kind, memory_order_release);
  }
  return kind == HL_ALLOC_FOREIGN;
}
