// The smallest LD_AUDIT library: it asks for the audit interface's version and, built with
// -DWATCH_BINDINGS, watches every symbol binding of every object (the dynamic linker then calls
// malloc for it before the C library has set up the environment). Built as a shared library by
// the test that runs a program under it.
#define _GNU_SOURCE
#include <link.h>
#include <stdint.h>

unsigned int la_version(unsigned int version) {
  (void)version;
  return LAV_CURRENT;
}

#ifdef WATCH_BINDINGS
unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie) {
  (void)map, (void)lmid, (void)cookie;
  return LA_FLG_BINDTO | LA_FLG_BINDFROM;
}

uintptr_t la_symbind64(Elf64_Sym *sym, unsigned int index, uintptr_t *from, uintptr_t *to,
                       unsigned int *flags, const char *name) {
  (void)index, (void)from, (void)to, (void)flags, (void)name;
  return sym->st_value;
}
#endif
