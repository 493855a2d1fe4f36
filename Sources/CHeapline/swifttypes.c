// Swift objects get their class's name as category. A Swift object starts at its malloc block
// and its first word is its metadata, written by swift_allocObject after malloc returns, so the
// hook reads it at the thread's next call (events.c). Nothing here calls the Swift runtime: from
// a hook it may deadlock on the runtime's own locks, and from anywhere it allocates in the
// program's heap, untraced (issue 9). A new class is described later, from the shim's own
// thread, by a SWIFT_TYPE record (swiftnames.c) that the reader names.
#include <dlfcn.h>

#include "internal.h"
#include "swiftnames.h"

// Swift's MetadataKind values for heap objects (swift/ABI/MetadataKind.def).
enum { MK_CLASS = 0, MK_HEAP_LOCAL = 0x400, MK_GENERIC_BOX = 0x500, MK_ERROR = 0x501,
       MK_TASK = 0x502, MK_JOB = 0x503, CD_KIND_CLASS = 16 };

int hl_swift_present;

enum { HL_TYPES = 1 << 15, HL_NOT_SWIFT = 0xFFFFFFFFu };
struct hl_type {
  _Atomic uintptr_t metadata;
  _Atomic uint32_t category;  // 0 while being filled in, HL_NOT_SWIFT for a rejected word
};
static struct hl_type *hl_types;
static _Atomic int hl_types_lock;
static uintptr_t hl_classes[HL_TYPES];  // metadata of classes, in the order first seen
static uint32_t hl_class_ids[HL_TYPES];
static _Atomic uint32_t hl_class_count;
static uint32_t hl_classes_named;

void hl_swift_init(void) {
  if (!hl_types) hl_types = hl_map(HL_TYPES * sizeof *hl_types);
  // Only to know that the runtime is loaded: its functions are never called.
  hl_swift_present = hl_types && dlsym(RTLD_DEFAULT, "swift_allocObject");
}

static int plausible_class(uintptr_t md, uint64_t size) {
  uint64_t m[6];
  if (!hl_safe_read(md, m, sizeof m)) return 0;
  uint32_t instance_size = (uint32_t)m[3];
  uint16_t align_mask = (uint16_t)(m[3] >> 32);
  uintptr_t descriptor = (uintptr_t)m[5];
  if (instance_size < 16 || instance_size > size || (align_mask & (align_mask + 1)) ||
      !descriptor)
    return 0;
  uint32_t flags;
  return hl_safe_read(descriptor, &flags, sizeof flags) && (flags & 0x1F) == CD_KIND_CLASS;
}

HL_HOOK static uint32_t examine(struct hl_buffer *b, uintptr_t md, uint64_t size) {
  uint64_t kind;
  if (!hl_safe_read(md, &kind, sizeof kind)) return 0;
  switch (kind) {
  case MK_CLASS:
    return plausible_class(md, size) ? hl_category_register(b, HL_CAT_SWIFT_CLASS, "", 0) : 0;
  case MK_HEAP_LOCAL:
    return hl_category_register(b, HL_CAT_CLOSURE, "Swift closure context", 21);
  case MK_GENERIC_BOX: return hl_category_register(b, HL_CAT_BOX, "Swift box", 9);
  case MK_ERROR: return hl_category_register(b, HL_CAT_SWIFT_OTHER, "Swift error", 11);
  case MK_TASK: return hl_category_register(b, HL_CAT_SWIFT_OTHER, "Swift task", 10);
  case MK_JOB: return hl_category_register(b, HL_CAT_SWIFT_OTHER, "Swift job", 9);
  default: return 0;
  }
}

// Whether the first two words of a block can be an object's header at all: its metadata, and a
// fresh object's refcount word (unowned count 1 and the pure-Swift-dealloc bit, 3, or a side
// table, the top bit). Other first words are not looked up.
static inline int object_header(const uint64_t w[2]) {
  uintptr_t md = (uintptr_t)w[0];
  return md >= 4096 && !(md & 7) && md < (1ull << 47) &&
         ((w[1] & 0xFFFFFFFFu) == 3 || (w[1] >> 63));
}

static inline size_t type_slot(uintptr_t md) {
  return (size_t)((md >> 3) * 0x9E3779B97F4A7C15ull >> 40) & (HL_TYPES - 1);
}

// Looks `md` up in the type table: returns its slot, or the empty slot where it would go, with
// `*seen` the metadata word there (`md`, or 0); -1 past 64 probes.
HL_HOOK static long find_type(uintptr_t md, uintptr_t *seen) {
  size_t slot = type_slot(md);
  for (size_t probe = 0; probe < 64; probe++, slot = (slot + 1) & (HL_TYPES - 1)) {
    *seen = atomic_load_explicit(&hl_types[slot].metadata, memory_order_acquire);
    if (!*seen || *seen == md) return (long)slot;
  }
  return -1;
}

// The category of the type in `slot`: 0 for no class, and 0 while another thread fills it in.
HL_HOOK static uint32_t category_at(long slot) {
  uint32_t cat = atomic_load_explicit(&hl_types[slot].category, memory_order_acquire);
  return cat == HL_NOT_SWIFT ? 0 : cat;
}

// The category of the block whose first words are `w` when that needs no lock and no new
// entry: 1 with `*category` (0 for no class) when known, 0 when only hl_swift_classify_in can
// tell (a metadata word not seen before). Asked while a live-table shard is held.
HL_HOOK int hl_swift_classify_known(const uint64_t w[2], uint32_t *category) {
  *category = 0;
  uintptr_t seen = 0;
  if (!object_header(w)) return 1;
  long slot = find_type((uintptr_t)w[0], &seen);
  if (slot < 0) {  // past 64 probes: no room for its type, and no class
    hl_categories_mark_full();
    return 1;
  }
  if (!seen) return 0;
  *category = category_at(slot);
  return 1;
}

HL_HOOK uint32_t hl_swift_classify_in(struct hl_buffer *b, uint64_t size, const uint64_t w[2]) {
  if (!object_header(w)) return 0;
  uintptr_t md = (uintptr_t)w[0], seen;
  long slot;
  while ((slot = find_type(md, &seen)) >= 0) {
    if (seen) return category_at(slot);
    hl_spin_lock(&hl_types_lock);
    int mine = atomic_load(&hl_types[slot].metadata) == 0;
    if (mine) atomic_store(&hl_types[slot].metadata, md);
    hl_spin_unlock(&hl_types_lock);
    if (!mine) continue;  // taken meanwhile: look again, at it or past it
    uint32_t cat = examine(b, md, size);
    if (cat && (cat - HL_REGISTERED_CATEGORY) < HL_TYPES) {
      uint32_t n = atomic_load(&hl_class_count);
      if (n < HL_TYPES) {
        hl_spin_lock(&hl_types_lock);
        n = atomic_load(&hl_class_count);
        hl_classes[n] = md;
        hl_class_ids[n] = cat;
        atomic_store(&hl_class_count, n + 1);
        hl_spin_unlock(&hl_types_lock);
        hl_sampler_wake();  // to name it now (sampler.c)
      }
    }
    atomic_store_explicit(&hl_types[slot].category, cat ? cat : HL_NOT_SWIFT,
                          memory_order_release);
    return cat;
  }
  hl_categories_mark_full();  // the type table has no room near its place: it goes unnamed
  return 0;
}

// Names the classes first seen since the last call. Runs outside any hook.
void hl_swift_name_pending(struct hl_buffer *b) {
  uint32_t n = atomic_load(&hl_class_count);
  for (; hl_classes_named < n; hl_classes_named++) {
    uint32_t i = hl_classes_named;
    uint64_t kind;
    if (hl_safe_read(hl_classes[i], &kind, sizeof kind) && kind == MK_CLASS)
      hl_swift_emit_type(b, hl_class_ids[i], hl_classes[i]);
  }
}

void hl_swift_begin(void) { hl_classes_named = 0; }  // a new trace needs every name again
