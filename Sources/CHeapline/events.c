// What a hook does once it has decided to record: the slow path behind hooks.c.
#include "internal.h"

// Writes the thread's previous allocation. It waited until now so that a Swift object's header,
// which swift_allocObject fills in after malloc returns, can be read to name its class.
HL_HOOK static void hl_finish_pending(struct hl_buffer *b) {
  struct hl_pending *p = &b->pending;
  if (!p->valid) return;
  if (hl_swift_present && p->category == 0 && p->size >= 16) {
    uint64_t words[2];
    if (hl_live_peek(p->addr, b->serial, p->counter, words)) {
      uint32_t cat = hl_swift_classify_in(b, p->size, words);
      if (cat && hl_live_set_category(p->addr, p->counter, cat)) p->category = cat;
    }
  }
  hl_emit_alloc_pending(b);
  p->valid = 0;
}

// Called by the sampler and at flush time for buffers whose owner is not running.
void hl_finish_pending_for_flush(struct hl_buffer *b) { hl_finish_pending(b); }

HL_HOOK static void hl_record_alloc(struct hl_buffer *b, void *ptr, size_t size) {
  uint64_t addr = (uint64_t)(uintptr_t)ptr;
  uint32_t stack = hl_capture_stack(b);
  uint64_t now = hl_now();
  struct hl_block blk = {.addr = addr, .size = size, .counter = b->next_alloc,
                         .serial = b->serial, .stack = stack, .category = hl_tls.scope};
  struct hl_block evicted;
  int had_evicted = 0;
  hl_live_insert(&blk, &evicted, &had_evicted);
  // The address is live in the table already: its free went unseen (freed from a signal
  // handler while this thread was inside the shim). Close the old block so it is not leaked.
  if (had_evicted) hl_emit_free(b, now, evicted.serial, evicted.counter);
  b->pending = (struct hl_pending){.addr = addr, .size = size, .time = now,
                                   .counter = blk.counter, .stack = stack,
                                   .category = blk.category, .valid = 1};
  b->next_alloc++;
}

HL_HOOK void hl_on_alloc(void *ptr, size_t size) {
  hl_tls.guard++;
  struct hl_buffer *b = hl_acquire();
  if (b) {
    hl_finish_pending(b);
    hl_record_alloc(b, ptr, size);
    hl_release(b);
  }
  hl_tls.guard--;
}

HL_HOOK void hl_on_free(void *ptr) {
  hl_tls.guard++;
  struct hl_buffer *b = hl_acquire();
  if (b) {
    hl_finish_pending(b);
    struct hl_block blk;
    uint64_t now = hl_now();
    if (hl_live_remove((uint64_t)(uintptr_t)ptr, &blk))
      hl_emit_free(b, now, blk.serial, blk.counter);
    hl_release(b);
  }
  hl_tls.guard--;
}

HL_HOOK void hl_on_realloc(const struct hl_block *old, int had_old, void *ptr, size_t size) {
  hl_tls.guard++;
  struct hl_buffer *b = hl_acquire();
  if (b) {
    hl_finish_pending(b);
    if (had_old) hl_emit_free(b, hl_now(), old->serial, old->counter);
    hl_record_alloc(b, ptr, size);
    hl_release(b);
  }
  hl_tls.guard--;
}
