// The solo path: while one thread alone records, its events take their buffer and the live
// table's shards with plain stores instead of locked instructions. A compare-and-swap for the
// buffer and one for a shard were a sixth of a single-threaded program's recording cost.
//
// The first thread to take a buffer becomes the solo thread. Its event marks itself busy with a
// plain store and then reads hl_solo_blocked, with no fence between the two. Anyone else who
// needs its buffer or the live table raises hl_solo_blocked and calls membarrier(), which makes
// every thread of the process pass a full barrier: either the solo thread then sees the block
// and takes the locked path, or its busy mark is visible and is waited out. A second thread
// that records ends the solo path for good; a flusher, a rotation or a leak scan pauses it. Where
// membarrier is missing (before Linux 4.14, or filtered by seccomp) there is no solo path.
#include <linux/membarrier.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

enum { HL_SOLO_FOREVER = 1u << 31 };

_Atomic uint32_t hl_solo_blocked = HL_SOLO_FOREVER;  // pauses under way, or ended for good
_Atomic int hl_solo_busy;  // written by the solo thread only
static _Atomic int hl_solo_claimed, hl_solo_ready;

static int barrier_all(void) {
  return syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0;
}

// Once per process, before the first buffer is taken: without the registration there is none.
void hl_solo_init(void) {
  if (atomic_exchange(&hl_solo_ready, 1)) return;
  if (syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0)
    atomic_store(&hl_solo_blocked, 0);
}

// Waits until the solo thread is out of any event it began before the block was raised.
static int wait_out(unsigned patience) {
  if (!barrier_all()) return 0;
  for (unsigned tries = 0; atomic_load_explicit(&hl_solo_busy, memory_order_acquire); tries++) {
    if (patience && tries > patience) return 0;
    sched_yield();
  }
  return 1;
}

// Ends the solo path for good: another thread records, or touches the live table.
void hl_solo_end(void) {
  uint32_t was = atomic_fetch_or(&hl_solo_blocked, HL_SOLO_FOREVER);
  if (was & HL_SOLO_FOREVER) return;
  // membarrier cannot fail once registered; were it to, this waits for whatever event is under way.
  wait_out(0);
}

// A buffer taken for the first time: the first one makes its thread the solo thread.
void hl_solo_claim(void) {
  if (hl_tls.solo) return;
  int unclaimed = 0;
  if (!(atomic_load(&hl_solo_blocked) & HL_SOLO_FOREVER) &&
      atomic_compare_exchange_strong(&hl_solo_claimed, &unclaimed, 1))
    hl_tls.solo = 1;
  else
    hl_solo_end();
}

// Keeps the solo thread on the locked path until hl_solo_resume; nests. With a patience, gives
// up (returning 0, nothing held) when the solo thread stays inside an event that long: one
// stopped by a debugger, say.
int hl_solo_pause(unsigned patience) {
  if (hl_tls.solo || hl_tls.pausing++) return 1;
  atomic_fetch_add(&hl_solo_blocked, 1);
  if (atomic_load(&hl_solo_blocked) & HL_SOLO_FOREVER) return 1;  // nobody runs solo anyway
  if (wait_out(patience)) return 1;
  hl_solo_resume();
  return 0;
}

void hl_solo_resume(void) {
  if (hl_tls.solo || --hl_tls.pausing) return;
  atomic_fetch_sub(&hl_solo_blocked, 1);
}

// The live table from outside the solo path: a thread other than the solo thread that has not
// paused it ends it.
void hl_solo_before_locking(void) {
  if (!hl_tls.solo && !hl_tls.pausing &&
      !(atomic_load_explicit(&hl_solo_blocked, memory_order_relaxed) & HL_SOLO_FOREVER))
    hl_solo_end();
}

// A forked child has only the thread that forked: it records nothing, and runs nothing solo.
void hl_solo_after_fork_child(void) {
  atomic_store(&hl_solo_blocked, HL_SOLO_FOREVER);
  atomic_store(&hl_solo_busy, 0);
  hl_tls.pausing = 0;
}
