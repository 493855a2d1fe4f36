// Marks: named instants that split a recording into generations. They come from the API, from a
// signal sent to the process (HEAPLINE_MARK_SIGNAL, when `--mark-signal` asks for one) and from
// a timer (HEAPLINE_MARK_EVERY_MS). A signal handler may not write to a buffer,
// so it only notes the time; the shim's thread writes the mark.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "heapline.h"
#include "internal.h"

enum { HL_SIGNAL_QUEUE = 64 };
static _Atomic uint64_t hl_signal_times[HL_SIGNAL_QUEUE];
static _Atomic uint32_t hl_signal_head;  // written by the handler
static uint32_t hl_signal_tail;          // read by the sampler
static uint32_t hl_signal_count;
static int hl_mark_signal;
static uint64_t hl_every_ns, hl_next_every_ns;
static uint32_t hl_every_count;

static void on_mark_signal(int sig) {
  (void)sig;
  uint32_t slot = atomic_fetch_add(&hl_signal_head, 1);
  atomic_store(&hl_signal_times[slot % HL_SIGNAL_QUEUE], hl_now() | 1);  // 0 means not yet
}

void hl_marks_install(void) {
  const char *sig = hl_option("HEAPLINE_MARK_SIGNAL");
  hl_mark_signal = sig ? atoi(sig) : 0;  // none unless asked: the program's signals are its own
  hl_install_handler(hl_mark_signal, on_mark_signal);
  hl_every_ns = hl_env_ms_as_ns("HEAPLINE_MARK_EVERY_MS");
  hl_next_every_ns = hl_every_ns;
}

void hl_marks_poll(struct hl_buffer *b, uint64_t now) {
  char name[64];
  while (hl_signal_tail != atomic_load(&hl_signal_head)) {
    _Atomic uint64_t *slot = &hl_signal_times[hl_signal_tail % HL_SIGNAL_QUEUE];
    uint64_t time = atomic_exchange(slot, 0);
    if (!time) break;  // the handler has the slot but has not written it yet
    int len = snprintf(name, sizeof name, "signal %u", ++hl_signal_count);
    hl_emit_mark(b, time, HL_MARK_GENERATION, name, (size_t)len);
    hl_signal_tail++;
  }
  while (hl_every_ns && now >= hl_next_every_ns) {
    int len = snprintf(name, sizeof name, "every %u", ++hl_every_count);
    hl_emit_mark(b, hl_next_every_ns, HL_MARK_GENERATION, name, (size_t)len);
    hl_next_every_ns += hl_every_ns;
  }
}

void hl_finish_pending_for_flush(struct hl_buffer *b);

void heapline_mark(const char *name) {
  if (atomic_load(&hl_state) != HL_ON || !name) return;
  hl_enter();
  struct hl_buffer *b = hl_acquire();
  if (b) {
    // The thread's last allocation is still pending (it waits for a Swift header); written
    // after the mark, it would take the mark's time and fall on the wrong side of it.
    hl_finish_pending_for_flush(b);
    hl_emit_mark(b, hl_now(), HL_MARK_GENERATION, name, strlen(name));
    hl_release(b);
  }
  hl_leave();
}
