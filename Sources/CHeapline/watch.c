// The allocations of one Swift task on whatever thread runs it. The in-process async leak check
// runs its body on a thread of its own, whose blocks are the body's; a body isolated to the main
// actor runs on the main actor's thread instead, beside other tests' main-actor work, and only
// the body's task tells its blocks there from theirs. Only while a task is watched: otherwise
// an allocation pays one load.
#include <dlfcn.h>

#include "heapline.h"
#include "internal.h"

struct hl_watched_alloc {
  uint64_t counter;
  uint32_t serial, unused;
};

_Atomic(const void *) hl_watched_task;
typedef void *(__attribute__((swiftcall)) * hl_task_fn)(void);
static hl_task_fn hl_current_task;  // the Swift runtime's swift_task_getCurrent
static struct hl_watched_alloc *hl_watch_notes;
static _Atomic uint64_t hl_watch_count;

int heapline_watch_task(const void *task) {
  if (task) {
    hl_enter();  // dlsym may allocate: the shim's own
    if (!hl_current_task) hl_current_task = (hl_task_fn)dlsym(RTLD_DEFAULT, "swift_task_getCurrent");
    if (!hl_watch_notes) hl_watch_notes = hl_map(HEAPLINE_WATCHED_MAX * sizeof *hl_watch_notes);
    hl_leave();
    if (!hl_current_task || !hl_watch_notes) return 0;
    atomic_store(&hl_watch_count, 0);
  }
  atomic_store(&hl_watched_task, task);
  return 1;
}

// In an allocation's event, while the task `watched` is: notes the block when that task made it.
void hl_watch_note(const void *watched, uint32_t serial, uint64_t counter) {
  if (hl_current_task() != watched) return;
  uint64_t i = atomic_fetch_add_explicit(&hl_watch_count, 1, memory_order_relaxed);
  if (i < HEAPLINE_WATCHED_MAX) hl_watch_notes[i] = (struct hl_watched_alloc){counter, serial, 0};
}

size_t heapline_watched_allocations(uint32_t *serials, uint64_t *counters, size_t capacity) {
  uint64_t count = atomic_load(&hl_watch_count);
  for (uint64_t i = 0; i < count && i < HEAPLINE_WATCHED_MAX && i < capacity; i++) {
    serials[i] = hl_watch_notes[i].serial;
    counters[i] = hl_watch_notes[i].counter;
  }
  return (size_t)count;
}
