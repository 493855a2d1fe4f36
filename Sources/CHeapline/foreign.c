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

// Whether a program's reference to the symbol (malloc@GLIBC_2.2.5, aligned_alloc@GLIBC_2.16: a
// program built against glibc names glibc's versions) binds to definition `i`: one with no
// version, or a glibc version as the default. A library that defines malloc only under a
// version of its own is not the program's.
static int program_binds(const ElfW(Half) *versym, const ElfW(Verdef) *verdef, const char *strtab,
                         uint32_t i) {
  if (!versym) return 1;
  ElfW(Half) v = versym[i];
  if (v & 0x8000) return 0;  // hidden: not the default version
  if ((v & 0x7fff) <= 1) return (v & 0x7fff) == 1;  // 1: global, unversioned; 0: local
  for (const ElfW(Verdef) *d = verdef; d; d = (const void *)((const char *)d + d->vd_next)) {
    if (d->vd_ndx == (v & 0x7fff)) {
      const ElfW(Verdaux) *aux = (const void *)((const char *)d + d->vd_aux);
      return strncmp(strtab + aux->vda_name, "GLIBC_", 6) == 0;
    }
    if (!d->vd_next) break;
  }
  return 0;
}

// The address of the function `name` that object `m` defines for the program, or NULL.
static void *symbol(const struct link_map *m, const char *name) {
  const ElfW(Sym) *symtab = NULL;
  const char *strtab = NULL;
  const uint32_t *gnu = NULL, *sysv = NULL;
  const ElfW(Half) *versym = NULL;
  const ElfW(Verdef) *verdef = NULL;
  for (const ElfW(Dyn) *d = m->l_ld; d && d->d_tag != DT_NULL; d++) {
    if (d->d_tag == DT_SYMTAB) symtab = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_STRTAB) strtab = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_GNU_HASH) gnu = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_HASH) sysv = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_VERSYM) versym = dyn_address(m, d->d_un.d_ptr);
    else if (d->d_tag == DT_VERDEF) verdef = dyn_address(m, d->d_un.d_ptr);
  }
  if (!symtab || !strtab) return NULL;
  const ElfW(Sym) *found = NULL;
  uint32_t at = 0;
  if (gnu) {
    uint32_t buckets = gnu[0], offset = gnu[1], words = gnu[2], h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = h * 33 + *c;
    const uint32_t *bucket = (const uint32_t *)((const ElfW(Addr) *)&gnu[4] + words);
    const uint32_t *chain = bucket + buckets;
    for (uint32_t i = bucket[h % buckets]; i >= offset && !found; i++) {
      uint32_t link = chain[i - offset];
      if ((link | 1) == (h | 1) && defines(&symtab[i], strtab, name)) found = &symtab[at = i];
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
      if (defines(&symtab[i], strtab, name)) found = &symtab[at = i];
  }
  if (!found || !program_binds(versym, verdef, strtab, at)) return NULL;
  void *address = (void *)(m->l_addr + found->st_value);
  if (ELF64_ST_TYPE(found->st_info) == STT_GNU_IFUNC) address = ((void *(*)(void))address)();
  return address;
}

static const char *base_name(const char *path) {
  const char *slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// glibc's own, and its debugging malloc, which wraps glibc's chunks.
static int is_glibc(const char *name) {
  return !strncmp(name, "libc.so", 7) || !strncmp(name, "libc_malloc_debug.so", 20);
}

// Another copy of the shim (the preload library, after a program that links the module) is
// glibc's allocator too: control.c settles which copy records.
static int is_shim(const struct link_map *m) { return symbol(m, "heapline_start") != NULL; }

// The object whose `name` the program's call would reach untraced: the first object after the
// shim, in the order the dynamic linker looks, that defines it (glibc, for what an allocator
// leaves out: untraced, its memalign went there too).
static const struct link_map *first_definer(const struct link_map *after, const char *name) {
  for (const struct link_map *m = after; m; m = m->l_next)
    if (m->l_name && !is_shim(m) && symbol(m, name)) return m;
  return NULL;
}

static void *first_definition(const struct link_map *after, const char *name) {
  const struct link_map *m = first_definer(after, name);
  return m ? symbol(m, name) : NULL;
}

// The objects after this library in the dynamic linker's order.
static const struct link_map *after_self(void) {
  const struct link_map *self = _r_debug.r_map;
  while (self && self->l_ld != _DYNAMIC) self = self->l_next;
  return self ? self->l_next : NULL;
}

static int resolve(void) {
  const struct link_map *after = after_self(), *owner = first_definer(after, "malloc");
  if (!owner || is_glibc(base_name(owner->l_name))) return HL_ALLOC_GLIBC;
  struct hl_foreign f = {
      .malloc = first_definition(after, "malloc"), .free = first_definition(after, "free"),
      .calloc = first_definition(after, "calloc"), .realloc = first_definition(after, "realloc"),
      .memalign = first_definition(after, "memalign"),
      .aligned_alloc = first_definition(after, "aligned_alloc"),
      .posix_memalign = first_definition(after, "posix_memalign"),
      .valloc = first_definition(after, "valloc"), .pvalloc = first_definition(after, "pvalloc")};
  if (!f.malloc || !f.free || !f.calloc || !f.realloc || !f.memalign || !f.aligned_alloc ||
      !f.posix_memalign || !f.valloc || !f.pvalloc)
    return HL_ALLOC_GLIBC;  // not even glibc's: nothing to pass them on to
  const char *name = base_name(owner->l_name);
  size_t n = strlen(name) < sizeof f.name - 1 ? strlen(name) : sizeof f.name - 1;
  memcpy(f.name, name, n);
  hl_foreign = f;
  return HL_ALLOC_FOREIGN;
}

void *hl_next_definition(const char *name) { return first_definition(after_self(), name); }

int hl_foreign_allocator_slow(void) {
  int kind = atomic_load_explicit(&hl_allocator, memory_order_acquire);
  if (kind == HL_ALLOC_UNKNOWN) {
    kind = resolve();  // the same answer from any thread that races here
    atomic_store_explicit(&hl_allocator, kind, memory_order_release);
  }
  return kind == HL_ALLOC_FOREIGN;
}
