// Backing stores: memory that code maps itself (mmap'd pixel buffers, say) and reports, because
// malloc's hooks never see it. The shim keeps the live ones in a table of its own, recording or
// not, so that footprints and memory limits count them; while recording, each report and each
// release is also a BACKING_ALLOC or BACKING_FREE record (TraceFormat.md).
#include <string.h>

#include "heapline.h"
#include "internal.h"

void hl_finish_pending_for_flush(struct hl_buffer *b);

// Few stores live at once (an image each), so a fixed table, at most half full, will do; a
// store reported while it is full is still written to the trace, only not counted in process.
enum { HL_BACKING_SLOTS = 1 << 14, HL_BACKING_MAX = HL_BACKING_SLOTS / 2 };

struct hl_store {
  uint64_t id, bytes;
  uint32_t category, used;
};

static struct hl_store *hl_stores;
static uint32_t hl_store_count;
static _Atomic int hl_stores_lock;
static _Atomic uint64_t hl_backing_bytes_now;
static int hl_full_logged;

static uint32_t slot_of(uint64_t id) {
  return (uint32_t)((id * 0x9E3779B97F4A7C15ull) >> 40) & (HL_BACKING_SLOTS - 1);
}

static struct hl_store *find_locked(uint64_t id) {
  if (!hl_stores) return NULL;
  // At most half full, so a probe always meets an empty slot.
  for (uint32_t i = slot_of(id);; i = (i + 1) & (HL_BACKING_SLOTS - 1)) {
    if (!hl_stores[i].used) return NULL;
    if (hl_stores[i].id == id) return &hl_stores[i];
  }
}

// Empties a slot and moves back the entries after it that probed past it (no tombstones).
static void erase_locked(struct hl_store *slot) {
  uint32_t mask = HL_BACKING_SLOTS - 1, hole = (uint32_t)(slot - hl_stores);
  for (uint32_t j = (hole + 1) & mask; hl_stores[j].used; j = (j + 1) & mask) {
    uint32_t want = slot_of(hl_stores[j].id);
    if (((j - want) & mask) >= ((j - hole) & mask)) {
      hl_stores[hole] = hl_stores[j];
      hole = j;
    }
  }
  memset(&hl_stores[hole], 0, sizeof hl_stores[hole]);
  hl_store_count--;
}

// Puts `store` in the table; returns 1 and the entry it replaced when the id was live already.
static int put(const struct hl_store *store, struct hl_store *replaced) {
  int had = 0, stored = 0;
  hl_spin_lock(&hl_stores_lock);
  if (!hl_stores) hl_stores = hl_map(HL_BACKING_SLOTS * sizeof *hl_stores);
  struct hl_store *slot = find_locked(store->id);
  if (slot) {
    *replaced = *slot;
    had = 1;
    atomic_fetch_sub(&hl_backing_bytes_now, slot->bytes);
    *slot = *store;
    stored = 1;
  } else if (hl_stores && hl_store_count < HL_BACKING_MAX) {
    uint32_t i = slot_of(store->id);
    while (hl_stores[i].used) i = (i + 1) & (HL_BACKING_SLOTS - 1);
    hl_stores[i] = *store;
    hl_store_count++;
    stored = 1;
  }
  if (stored) atomic_fetch_add(&hl_backing_bytes_now, store->bytes);
  hl_spin_unlock(&hl_stores_lock);
  if (!stored && !hl_full_logged) {
    hl_full_logged = 1;
    hl_log("too many live backing stores: later ones are traced but not counted", NULL);
  }
  return had;
}

static void emit(struct hl_buffer *b, int tag, uint64_t time, const struct hl_store *store,
                 uint32_t stack) {
  hl_ensure(b, 1 + 5 * 10);
  hl_put_u8(b, (uint8_t)tag);
  hl_put_time(b, time);
  hl_put_varint(b, store->id);
  hl_put_varint(b, store->bytes);
  hl_put_varint(b, store->category);
  if (tag == HL_TAG_BACKING_ALLOC) hl_put_varint(b, stack);
  hl_commit_record(b);
}

// The calling thread's buffer with its pending allocation written, so records stay in order;
// NULL when not recording.
static struct hl_buffer *acquire(void) {
  if (atomic_load(&hl_state) != HL_ON) return NULL;
  struct hl_buffer *b = hl_acquire();
  if (b) hl_finish_pending_for_flush(b);
  return b;
}

// In the hook section, so that stacks start at the caller, as a malloc's do.
HL_HOOK void heapline_backing_alloc(uint64_t id, uint64_t bytes, const char *category) {
  hl_enter();
  const char *name = category && *category ? category : "Backing store";
  struct hl_buffer *b = acquire();
  struct hl_store store = {.id = id, .bytes = bytes, .used = 1};
  store.category = hl_category_register(b, HL_CAT_BACKING, name, strlen(name));
  struct hl_store replaced;
  int had = put(&store, &replaced);
  if (b) {
    uint64_t now = hl_now();
    if (had) emit(b, HL_TAG_BACKING_FREE, now, &replaced, 0);
    emit(b, HL_TAG_BACKING_ALLOC, now, &store, hl_capture_stack(b, NULL));
    hl_release(b);
  }
  hl_leave();
}

uint64_t heapline_backing_free(uint64_t id) {
  hl_enter();
  struct hl_store store = {0};
  hl_spin_lock(&hl_stores_lock);
  struct hl_store *slot = find_locked(id);
  if (slot) {
    store = *slot;
    atomic_fetch_sub(&hl_backing_bytes_now, slot->bytes);
    erase_locked(slot);
  }
  hl_spin_unlock(&hl_stores_lock);
  // A store the table could not hold is still released in the trace, with its bytes unknown.
  if (!slot) store = (struct hl_store){.id = id};
  struct hl_buffer *b = acquire();
  if (b) {
    emit(b, HL_TAG_BACKING_FREE, hl_now(), &store, 0);
    hl_release(b);
  }
  hl_leave();
  return store.bytes;
}

uint64_t heapline_backing_bytes(const char *category, uint64_t *stores) {
  uint32_t wanted = category ? hl_category_find(category) : 0;
  uint64_t bytes = 0, count = 0;
  if (!category || wanted) {
    hl_spin_lock(&hl_stores_lock);
    for (uint32_t i = 0; hl_stores && i < HL_BACKING_SLOTS; i++)
      if (hl_stores[i].used && (!category || hl_stores[i].category == wanted)) {
        bytes += hl_stores[i].bytes;
        count++;
      }
    hl_spin_unlock(&hl_stores_lock);
  }
  if (stores) *stores = count;
  return bytes;
}

uint64_t hl_backing_total(void) { return atomic_load(&hl_backing_bytes_now); }
