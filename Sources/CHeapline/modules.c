// The module map: every loaded ELF object with its load bias, segments and build id, so that
// the reader can symbolize offline. Written again whenever objects are loaded or unloaded.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <elf.h>
#include <link.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"

static unsigned long long hl_seen_generation = ~0ull;

struct hl_walk {
  struct hl_buffer *b;
  unsigned long long generation;
  int first;
};

static size_t build_id(const struct dl_phdr_info *info, const uint8_t **out) {
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *note = (const ElfW(Nhdr) *)p;
      const uint8_t *name = p + sizeof *note;
      const uint8_t *desc = name + ((note->n_namesz + 3) & ~3u);
      if (note->n_type == NT_GNU_BUILD_ID && note->n_namesz == 4 && !memcmp(name, "GNU", 4)) {
        *out = desc;
        return note->n_descsz;
      }
      p = desc + ((note->n_descsz + 3) & ~3u);
    }
  }
  return 0;
}

// Whether `info` is the preload library itself, whatever its file is called (HEAPLINE_PRELOAD
// may name any copy): its frames are dropped from every stack, so no frame names it, and its
// data is the shim's, no root of the leak scan. (Built into a program that records itself, the
// shim is that program's code, whose module every trace needs.)
int hl_is_preload_library(const struct dl_phdr_info *info) {
#ifdef HL_PRELOAD
  uintptr_t self = (uintptr_t)&hl_is_preload_library;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    uintptr_t start = info->dlpi_addr + ph->p_vaddr;
    if (ph->p_type == PT_LOAD && self >= start && self < start + ph->p_memsz) return 1;
  }
#else
  (void)info;
#endif
  return 0;
}

// The main program's path, kept once read. Read through /proc/thread-self: /proc/self is the
// main thread's view, and once it has called pthread_exit its link reads as nothing: the files
// of a rotation, or of a recording begun again after a failed exec, named the program "" and
// its frames went unsymbolized.
static const char *main_program_path(void) {
  static char exe[4096];
  if (!exe[0]) {
    ssize_t n = readlink("/proc/thread-self/exe", exe, sizeof exe - 1);
    if (n <= 0) n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = 0;
  }
  return exe;
}

static int emit_module(struct dl_phdr_info *info, size_t size, void *arg) {
  struct hl_walk *w = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    w->generation = info->dlpi_adds + info->dlpi_subs;
  if (hl_is_preload_library(info)) {
    w->first = 0;
    return 0;
  }
  const char *path = info->dlpi_name;
  if (w->first && (!path || !*path)) path = main_program_path();  // it has no name here
  w->first = 0;
  if (!path) path = "";
  size_t path_len = strnlen(path, 4096);
  const uint8_t *id = NULL;
  size_t id_len = build_id(info, &id);
  if (id_len > 64) id_len = 64;
  // In the side section, with the stacks: the symbols pass reads nothing else.
  struct hl_buffer *b = w->b;
  uint32_t loads = 0;
  for (int i = 0; i < info->dlpi_phnum; i++) loads += info->dlpi_phdr[i].p_type == PT_LOAD;
  uint64_t bytes = 1 + 10 + 10 + (uint64_t)loads * 20 + 10 + path_len + 10 + id_len;
  if (bytes > HL_SIDE_BYTES / 2) return 0;  // no ELF object has so many segments
  hl_side_ensure(b, (uint32_t)bytes);
  hl_side_u8(b, HL_TAG_MODULE);
  hl_side_varint(b, info->dlpi_addr);
  hl_side_varint(b, loads);
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_LOAD) continue;
    hl_side_varint(b, ph->p_vaddr);
    hl_side_varint(b, ph->p_memsz);
  }
  hl_side_varint(b, path_len);
  hl_side_bytes(b, path, (uint32_t)path_len);
  hl_side_varint(b, id_len);
  if (id_len) hl_side_bytes(b, id, (uint32_t)id_len);
  b->stack_records++;
  hl_side_commit(b);
  return 0;
}

static int peek_generation(struct dl_phdr_info *info, size_t size, void *arg) {
  unsigned long long *generation = arg;
  if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof info->dlpi_subs)
    *generation = info->dlpi_adds + info->dlpi_subs;
  return 1;  // the counters are the same in every entry: one is enough
}

// Cheap when nothing changed: glibc counts loads and unloads for us. The shim's thread calls it,
// and so do program threads at dlopen and dlclose (dl.c): one at a time.
void hl_modules_emit_if_changed(struct hl_buffer *b, int force) {
  static _Atomic int lock;
  hl_spin_lock(&lock);
  unsigned long long generation = 0;
  dl_iterate_phdr(peek_generation, &generation);
  if (force || generation != hl_seen_generation) {
    struct hl_walk w = {.b = b, .first = 1};
    dl_iterate_phdr(emit_module, &w);
    hl_seen_generation = generation;
  }
  hl_spin_unlock(&lock);
}
