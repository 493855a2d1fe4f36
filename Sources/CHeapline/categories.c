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

enum { HL_MAX_NAMES = 4096, HL_NAME_BYTES = 128 };

// Registered names, looked up by scopes when they start; few, so a scan under a lock will do.
static char hl_names[HL_MAX_NAMES][HL_NAME_BYTES];
static uint8_t hl_kinds[HL_MAX_NAMES];
static _Atomic uint8_t hl_written[HL_MAX_NAMES];  // its CATEGORY record is in this recording
static uint32_t hl_name_count;
static _Atomic int hl_names_lock;

static uint32_t find_locked(const char *name, size_t len) {
  for (uint32_t i = 0; i < hl_name_count; i++)
    if (strncmp(hl_names[i], name, len) == 0 && hl_names[i][len] == 0)
      return HL_REGISTERED_CATEGORY + i;
  return 0;
}

uint32_t hl_category_find(const char *name) {
  hl_spin_lock(&hl_names_lock);
  uint32_t id = find_locked(name, strnlen(name, HL_NAME_BYTES - 1));
  hl_spin_unlock(&hl_names_lock);
  return id;
}

// Returns the category's id, registering it and writing its record on first use, into `b`
// when the caller holds its buffer already (a hook), else into the calling thread's buffer.
uint32_t hl_category_register(struct hl_buffer *b, int kind, const char *name, size_t len) {
  if (len >= HL_NAME_BYTES) len = HL_NAME_BYTES - 1;
  hl_spin_lock(&hl_names_lock);
  uint32_t id = len ? find_locked(name, len) : 0;  // unnamed: a Swift class named later
  int fresh = 0;
  if (!id && hl_name_count < HL_MAX_NAMES) {
    memcpy(hl_names[hl_name_count], name, len);
    hl_names[hl_name_count][len] = 0;
    hl_kinds[hl_name_count] = (uint8_t)kind;
    id = HL_REGISTERED_CATEGORY + hl_name_count++;
    fresh = 1;
  }
  hl_spin_unlock(&hl_names_lock);
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

void hl_categories_reset(void) {
  hl_spin_lock(&hl_names_lock);
  hl_name_count = 0;
  hl_spin_unlock(&hl_names_lock);
}

// Writes the names that this recording has not written yet; all of them when `all` (a new trace
// starts with the names that earlier recordings in this process registered). Swift classes
// registered unnamed are named again by hl_swift_name_pending.
static void emit_names(struct hl_buffer *b, int all) {
  hl_spin_lock(&hl_names_lock);
  uint32_t n = hl_name_count;
  hl_spin_unlock(&hl_names_lock);
  for (uint32_t i = 0; i < n; i++) {
    size_t len = strlen(hl_names[i]);
    if (!len || (atomic_exchange(&hl_written[i], 1) && !all)) continue;
    hl_emit_category(b, HL_REGISTERED_CATEGORY + i, hl_kinds[i], hl_names[i], len);
  }
}

void hl_categories_emit_all(struct hl_buffer *b) { emit_names(b, 1); }

// On the shim's thread: the names registered when no buffer could take their record.
void hl_categories_emit_pending(struct hl_buffer *b) { emit_names(b, 0); }
