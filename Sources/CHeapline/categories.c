// Categories: size classes for raw mallocs, and registered names (scopes, Swift types).
#include <string.h>

#include "internal.h"

// Index i up to 64 is 16*i bytes; above 1 KiB there are four classes per power of two.
HL_HOOK uint32_t hl_size_class(uint64_t size) {
  if (size <= 1024) return (uint32_t)((size + 15) / 16);
  int e = 63 - __builtin_clzll(size - 1) - 10;  // size - 1 lies in [2^(10+e), 2^(11+e))
  uint64_t step = 1ull << (8 + e);
  uint64_t s = (size - (1ull << (10 + e)) + step - 1) / step;  // 1...4
  return 65 + 4 * (uint32_t)e + (uint32_t)(s - 1);
}

// Registered categories: scopes, backing stores and kinds of Swift object by name, and Swift
// classes, registered unnamed (the reader names them from their SWIFT_TYPE records). A program
// may have many thousand classes (a generic class is one per instantiation), so they take no
// room for a name; names are few, and found by a scan under the lock when a scope starts. When
// either bound is reached, the trailer says so (HL_FLAG_CATEGORIES_FULL) and what has no
// category counts in its size class.
enum { HL_MAX_CATEGORIES = 1 << 15, HL_MAX_NAMES = 4096, HL_NAME_BYTES = 128 };

static char hl_names[HL_MAX_NAMES][HL_NAME_BYTES];
static uint32_t hl_named[HL_MAX_NAMES];      // the category of each name
static uint8_t hl_kinds[HL_MAX_CATEGORIES];
static _Atomic uint8_t hl_written[HL_MAX_CATEGORIES];  // its CATEGORY record is in this recording
static uint32_t hl_category_count, hl_name_count;
static _Atomic int hl_names_lock;
static _Atomic uint32_t hl_full;  // HL_FLAG_CATEGORIES_FULL once a registration found no room

static uint32_t find_locked(const char *name, size_t len) {
  for (uint32_t i = 0; i < hl_name_count; i++)
    if (strncmp(hl_names[i], name, len) == 0 && hl_names[i][len] == 0)
      return HL_REGISTERED_CATEGORY + hl_named[i];
  return 0;
}

uint32_t hl_category_find(const char *name) {
  hl_spin_lock(&hl_names_lock);
  uint32_t id = find_locked(name, strnlen(name, HL_NAME_BYTES - 1));
  hl_spin_unlock(&hl_names_lock);
  return id;
}

uint32_t hl_categories_full(void) { return atomic_load(&hl_full); }

// Whether `id` names a scope that heapline_scope_push registered (a kind is set before its id is
// handed out; the rest stay 0).
int hl_category_is_scope(uint32_t id) {
  uint32_t c = id - HL_REGISTERED_CATEGORY;
  return id >= HL_REGISTERED_CATEGORY && c < HL_MAX_CATEGORIES && hl_kinds[c] == HL_CAT_SCOPE;
}

void hl_categories_mark_full(void) {
  atomic_store(&hl_full, HL_FLAG_CATEGORIES_FULL);
  if (hl_shared) atomic_fetch_or(&hl_shared->flags, HL_FLAG_CATEGORIES_FULL);
}

// Returns the category's id, registering it and writing its record on first use, into `b`
// when the caller holds its buffer already (a hook), else into the calling thread's buffer.
// 0 when there is no room for it.
uint32_t hl_category_register(struct hl_buffer *b, int kind, const char *name, size_t len) {
  if (len >= HL_NAME_BYTES) len = HL_NAME_BYTES - 1;
  hl_spin_lock(&hl_names_lock);
  uint32_t id = len ? find_locked(name, len) : 0;  // unnamed: a Swift class named later
  int fresh = 0;
  if (!id && hl_category_count < HL_MAX_CATEGORIES && (!len || hl_name_count < HL_MAX_NAMES)) {
    if (len) {
      memcpy(hl_names[hl_name_count], name, len);
      hl_names[hl_name_count][len] = 0;
      hl_named[hl_name_count++] = hl_category_count;
    }
    hl_kinds[hl_category_count] = (uint8_t)kind;
    id = HL_REGISTERED_CATEGORY + hl_category_count++;
    fresh = 1;
  }
  hl_spin_unlock(&hl_names_lock);
  if (!id) hl_categories_mark_full();
  if (fresh && len) {
    // A caller refused its buffer (a signal handler inside an event) does not ask again: the
    // shim's thread writes the name at its next look (hl_categories_emit_pending).
    int mine = !b && !hl_tls.holding && (b = hl_acquire()) != NULL;
    if (b) {
      hl_emit_category(b, id, kind, name, len);
      atomic_store(&hl_written[id - HL_REGISTERED_CATEGORY], 1);
    }
    if (mine) hl_release(b);
  }
  return id;
}

// Writes the names that this recording has not written yet; all of them when `all` (a new trace
// starts with the names that earlier recordings in this process registered). Swift classes
// registered unnamed are named again by hl_swift_name_pending.
static void emit_names(struct hl_buffer *b, int all) {
  hl_spin_lock(&hl_names_lock);
  uint32_t n = hl_name_count;
  hl_spin_unlock(&hl_names_lock);
  for (uint32_t i = 0; i < n; i++) {
    uint32_t c = hl_named[i];
    if (atomic_exchange(&hl_written[c], 1) && !all) continue;
    const char *name = hl_names[i];
    hl_emit_category(b, HL_REGISTERED_CATEGORY + c, hl_kinds[c], name, strlen(name));
  }
}

void hl_categories_emit_all(struct hl_buffer *b) { emit_names(b, 1); }

// On the shim's thread: the names registered when no buffer could take their record.
void hl_categories_emit_pending(struct hl_buffer *b) { emit_names(b, 0); }
