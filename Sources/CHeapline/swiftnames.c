// The SWIFT_TYPE record: what the reader needs to name a Swift class offline. Calling
// swift_getTypeName here would allocate in the program's heap behind its back (issue 9), so the
// shim copies the context descriptors' names (C strings in the binary) and walks the generic
// arguments' metadata itself, as plain reads. Layouts: swift/ABI/Metadata.h, MetadataValues.h.
//
// A node of the type tree, written depth first (TraceFormat.md, "SWIFT_TYPE"):
//   nominal      descriptor, contexts outermost first (kind, generic parameters, name), and
//                one child per generic parameter
//   tuple        labels, one child per element
//   function     flags, one child per parameter, then the result
//   existential  class constraint, superclass (0/1 child) and protocols (nominal children)
//   metatype     its instance type; other: the metadata kind; unreadable; elided (over budget);
//   value        a value generic argument (`let n: Int`), zigzag-encoded
#include <string.h>

#include "internal.h"
#include "swiftnames.h"

enum { TN_NOMINAL = 1, TN_TUPLE = 2, TN_FUNCTION = 3, TN_EXISTENTIAL = 4, TN_METATYPE = 5,
       TN_OTHER = 6, TN_UNREADABLE = 7, TN_ELIDED = 8, TN_VALUE = 9 };
enum { CD_MODULE = 0, CD_EXTENSION = 1, CD_ANONYMOUS = 2, CD_PROTOCOL = 3, CD_CLASS = 16,
       CD_STRUCT = 17, CD_ENUM = 18, CD_GENERIC = 0x80 };
enum { MAX_CONTEXTS = 12, MAX_NAME = 128, MAX_NODES = 64, MAX_ARGS = 16, MAX_PENDING = 96,
       RECORD_BYTES = 8192, NODE_BYTES = 16 + MAX_CONTEXTS * (8 + MAX_NAME) + 8 };

static uint8_t out[RECORD_BYTES];  // naming runs on one thread at a time (the sampler's owner)
static size_t pos;

static void put_u8(uint8_t v) { out[pos++] = v; }
static void put_varint(uint64_t v) {
  for (; v >= 0x80; v >>= 7) out[pos++] = (uint8_t)(v | 0x80);
  out[pos++] = (uint8_t)v;
}
static void put_name(const char *s, size_t n) {
  put_varint(n);
  memcpy(out + pos, s, n);
  pos += n;
}

// A NUL-terminated string of at most MAX_NAME bytes, read page by page.
static size_t read_string(uintptr_t addr, char *s) {
  if (!addr) return 0;
  size_t n = 0;
  while (n < MAX_NAME) {
    size_t chunk = 4096 - ((addr + n) & 4095);
    if (chunk > MAX_NAME - n) chunk = MAX_NAME - n;
    if (!hl_safe_read(addr + n, s + n, chunk)) break;  // never across a page: all or nothing
    void *nul = memchr(s + n, 0, chunk);
    if (nul) return (size_t)((char *)nul - s);
    n += chunk;
  }
  return n;
}

// Follows a 32-bit relative pointer stored at `at`; `indirectable` ones with the low bit set
// point at a pointer to the target instead.
static uintptr_t relative(uintptr_t at, int indirectable) {
  int32_t offset;
  if (!hl_safe_read(at, &offset, sizeof offset) || !offset) return 0;
  uintptr_t target = at + (intptr_t)(offset & (indirectable ? ~1 : ~0));
  if (indirectable && (offset & 1) && !hl_safe_read(target, &target, sizeof target)) return 0;
  return target;
}

// Where a generic context's header (NumParams, …) lies, by descriptor kind; 0 for none.
static size_t generic_header(uint32_t kind) {
  switch (kind) {
  case CD_CLASS: return 44 + 8;  // after the class fields and the instantiation cache/pattern
  case CD_STRUCT: case CD_ENUM: return 28 + 8;
  case CD_EXTENSION: return 12;
  case CD_ANONYMOUS: return 8;
  default: return 0;
  }
}

// An extension's extended type, when its mangled name starts with a symbolic reference.
static uintptr_t extended_type(uintptr_t ext) {
  uintptr_t mangled = relative(ext + 8, 0);
  uint8_t head;
  if (!mangled || !hl_safe_read(mangled, &head, 1)) return 0;
  uintptr_t target = head == 1 || head == 2 ? relative(mangled + 1, 0) : 0;
  if (head == 2 && target && !hl_safe_read(target, &target, sizeof target)) return 0;
  return target;
}

// The name of the module that context `d` was declared in.
static uintptr_t module_name(uintptr_t d) {
  for (int steps = 0; d && steps < 4 * MAX_CONTEXTS; steps++) {
    uint32_t f;
    if (!hl_safe_read(d, &f, sizeof f)) return 0;
    if ((f & 0x1F) == CD_MODULE) return relative(d + 8, 0);
    d = relative(d + 4, 1);
  }
  return 0;
}

// Writes descriptor `d` and its parents, outermost first. Returns NumParams of `d` itself.
static uint32_t put_contexts(uintptr_t d) {
  uintptr_t chain[MAX_CONTEXTS];
  uint32_t flags[MAX_CONTEXTS];
  size_t n = 0;
  while (d && n < MAX_CONTEXTS) {
    uint32_t f;
    if (!hl_safe_read(d, &f, sizeof f)) break;
    uintptr_t extended = (f & 0x1F) == CD_EXTENSION ? extended_type(d) : 0;
    chain[n] = d;  // an extension stays, for the module it was declared in
    flags[n++] = f;
    // Outer.Inner declared in `extension Outer` is named through Outer.
    d = extended ? extended : relative(d + 4, 1);
  }
  put_varint(n);
  uint32_t own = 0;
  char name[MAX_NAME];
  for (size_t i = n; i-- > 0;) {
    uint32_t kind = flags[i] & 0x1F;
    size_t header = generic_header(kind);
    uint16_t params = 0;
    if ((flags[i] & CD_GENERIC) && header) hl_safe_read(chain[i] + header, &params, 2);
    int named = kind == CD_MODULE || kind == CD_PROTOCOL || (kind >= CD_CLASS && kind <= CD_ENUM);
    size_t len = named ? read_string(relative(chain[i] + 8, 0), name) : 0;
    if (kind == CD_EXTENSION) len = read_string(module_name(chain[i]), name);
    put_u8((uint8_t)kind);
    put_varint(params);
    put_name(name, len);
    if (i == 0) own = params;
  }
  return own;
}

// What a pending node stands for.
enum { ITEM_METADATA = 0, ITEM_DESCRIPTOR = 1, ITEM_VALUE = 2, ITEM_NONE = 3 };
struct item { uintptr_t ptr; uint8_t what; };
static struct item pending[MAX_PENDING];
static size_t npending;

static void push(uintptr_t ptr, uint8_t what) {
  if (npending < MAX_PENDING) pending[npending++] = (struct item){ptr, what};
}

// Pushes `count` children read from `count` words at `at`, `stride` bytes apart, last first
// so that they come off the stack in order; a word that cannot be read becomes an unreadable
// child, so the count written always matches.
static void push_words(uintptr_t at, size_t count, size_t stride) {
  for (size_t i = count; i-- > 0;) {
    uintptr_t word = 0;
    hl_safe_read(at + i * stride, &word, sizeof word);
    push(word, ITEM_METADATA);
  }
}

static void put_nominal(uintptr_t md, uintptr_t desc, uint64_t kind) {
  put_u8(TN_NOMINAL);
  put_varint(desc);
  uint32_t params = put_contexts(desc);
  uint32_t f = 0;
  hl_safe_read(desc, &f, sizeof f);
  size_t header = generic_header(f & 0x1F);
  if (!md || !(f & CD_GENERIC) || !header || params > MAX_ARGS) params = 0;
  uintptr_t args = md + 2 * 8;  // structs and enums: right after kind and descriptor
  if (md && kind == 0) {  // a class: its own members follow its superclasses'
    uint32_t words[3] = {0};  // negative size or bounds, positive size, immediate members
    if (!hl_safe_read(desc + 24, words, sizeof words)) params = 0;
    if (f & (1u << 29)) {  // resilient superclass: the runtime stored the offset, in bytes
      int64_t offset = 0;
      uintptr_t bounds = relative(desc + 24, 0);
      if (!bounds || !hl_safe_read(bounds, &offset, sizeof offset)) params = 0;
      args = md + (intptr_t)offset;
    } else if (f & (1u << 28)) {
      args = md - 8 * (uintptr_t)words[0];
    } else {
      args = md + 8 * (uintptr_t)(words[1] - words[2]);
    }
  }
  uint8_t param[MAX_ARGS];
  if (params && !hl_safe_read(desc + header + 8, param, params)) params = 0;
  put_varint(params);
  // Key parameters take the argument slots in order: a type's metadata, a value (`let n: Int`)
  // or a pack. A pack, or a parameter fixed by a same-type requirement, gets no name.
  struct item slots[MAX_ARGS];
  size_t used = 0;
  for (uint32_t i = 0; i < params; i++) {
    uintptr_t word = 0;
    int key = (param[i] & 0x80) != 0, kind = param[i] & 0x3F;
    if (key && (kind == 0 || kind == 2)) hl_safe_read(args + 8 * used, &word, 8);
    slots[i] = (struct item){word, kind == 2 ? ITEM_VALUE : kind == 0 ? ITEM_METADATA : ITEM_NONE};
    used += key;
  }
  for (uint32_t i = params; i-- > 0;) push(slots[i].ptr, slots[i].what);
}

static void put_node(struct item it) {
  if (it.what == ITEM_DESCRIPTOR) {
    put_nominal(0, it.ptr, 0);
    return;
  }
  if (it.what == ITEM_VALUE) {
    put_u8(TN_VALUE);
    put_varint(((uint64_t)it.ptr << 1) ^ (uint64_t)((int64_t)it.ptr >> 63));
    return;
  }
  if (it.what == ITEM_NONE) {
    put_u8(TN_ELIDED);
    return;
  }
  uint64_t m[3];
  if (!it.ptr || !hl_safe_read(it.ptr, m, sizeof m)) {
    put_u8(TN_UNREADABLE);
    return;
  }
  uint64_t kind = m[0];
  if (kind == 0 || (kind >= 0x200 && kind <= 0x204)) {  // class, struct, enum, optional, foreign
    uintptr_t desc = kind == 0 ? 0 : (uintptr_t)m[1];
    if (kind == 0 && !hl_safe_read(it.ptr + 5 * 8, &desc, sizeof desc)) desc = 0;
    put_nominal(it.ptr, desc, kind);
  } else if (kind == 0x301) {  // tuple: count, labels, then (type, offset) pairs
    size_t n = m[1] > MAX_ARGS ? 0 : (size_t)m[1];
    char labels[MAX_NAME];
    put_u8(TN_TUPLE);
    put_name(labels, read_string((uintptr_t)m[2], labels));
    put_varint(n);
    push_words(it.ptr + 3 * 8, n, 16);
  } else if (kind == 0x302) {  // function: flags, result, parameters
    size_t n = (m[1] & 0xFFFF) > MAX_ARGS ? 0 : (size_t)(m[1] & 0xFFFF);
    put_u8(TN_FUNCTION);
    put_varint(m[1] & 0xFFFFFFFF);
    put_varint(n);
    push((uintptr_t)m[2], ITEM_METADATA);
    push_words(it.ptr + 3 * 8, n, 8);
  } else if (kind == 0x303) {  // existential: flags, protocol count, [superclass], protocols
    uint32_t flags = (uint32_t)m[1], n = (uint32_t)(m[1] >> 32);
    int super = (flags & 0x40000000) != 0;
    if (n > MAX_ARGS) n = 0;
    put_u8(TN_EXISTENTIAL);
    put_u8(flags >> 31);
    put_u8((uint8_t)super);
    put_varint(n);
    uintptr_t list = it.ptr + (2 + (size_t)super) * 8;
    for (uint32_t i = n; i-- > 0;) {
      uintptr_t proto = 0;
      hl_safe_read(list + 8 * i, &proto, sizeof proto);
      push(proto & ~(uintptr_t)1, ITEM_DESCRIPTOR);
    }
    if (super) push((uintptr_t)m[2], ITEM_METADATA);
  } else if (kind == 0x304 || kind == 0x306) {  // metatype, existential metatype
    put_u8(TN_METATYPE);
    push((uintptr_t)m[1], ITEM_METADATA);
  } else {
    put_u8(TN_OTHER);
    put_varint(kind);
  }
}

void hl_swift_emit_type(struct hl_buffer *b, uint32_t category, uintptr_t metadata) {
  pos = 0;
  npending = 0;
  push(metadata, ITEM_METADATA);
  // Every pending child still needs one byte, so the tree stays whole when the budget ends.
  for (int nodes = 0; npending; nodes++) {
    struct item it = pending[--npending];
    if (nodes < MAX_NODES && npending + MAX_ARGS + 2 < MAX_PENDING &&
        pos + NODE_BYTES + MAX_PENDING < RECORD_BYTES)
      put_node(it);
    else
      put_u8(TN_ELIDED);
  }
  hl_ensure(b, (uint32_t)(1 + 10 + pos));
  hl_put_u8(b, HL_TAG_SWIFT_TYPE);
  hl_put_varint(b, category);
  hl_put_bytes(b, out, (uint32_t)pos);
  hl_commit_record(b);
}
