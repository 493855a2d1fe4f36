// Memory, locks, time and logging for the shim itself. None of it may call malloc.
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

void hl_own_add(void *p, size_t bytes);
void hl_own_remove(void *p);

void *hl_map(size_t bytes) {
  void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                 -1, 0);
  if (p == MAP_FAILED) return NULL;
  hl_own_add(p, bytes);
  return p;
}

// Whether one of the shim's files may grow to `end` bytes under the file size limit
// (`ulimit -f`). Past it, the write would fail with EFBIG, and the kernel would also send the
// program SIGXFSZ, whose default action ends it: a recording in a shell with a limit killed every
// program that outgrew it, for a file the program never asked for. So the shim asks first, and
// a write that would not fit fails as one on a full disk does, without the signal. Read at each
// write, since the program may change its limit.
int hl_file_fits(uint64_t end) {
  struct rlimit limit;
  return getrlimit(RLIMIT_FSIZE, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY ||
         end <= (uint64_t)limit.rlim_cur;
}

void hl_unmap(void *p, size_t bytes) {
  if (!p) return;
  munmap(p, bytes);
  hl_own_remove(p);  // after munmap: a thread stopped in between leaves a slot for nothing
}

// Grows a mapping of hl_map's in place or moves it, keeping its pages: the kernel moves page
// tables rather than copying, and only the added part is new (zeroed) memory. NULL, with the
// old mapping left as it was, when there is no room.
void *hl_remap(void *p, size_t bytes, size_t grown) {
  void *q = mremap(p, bytes, grown, MREMAP_MAYMOVE);
  if (q == MAP_FAILED) return NULL;
  hl_own_remove(p);
  hl_own_add(q, grown);
  return q;
}

// The registry of the shim's own mappings. The leak scan takes every other writable anonymous
// mapping for the program's memory, a root; the shim's tables hold the address of every live
// block and would make them all look reachable. Lock-free, because the scan reads it with the
// world stopped: a thread stopped while it adds a mapping leaves its slot without an end (the
// mapping is fresh and zeroed, so scanning it finds nothing), and one stopped while it removes
// one leaves a slot for memory that is gone. When the table is full, hl_own_overflow is set and
// the scan leaves anonymous mappings out, as it did before there was a registry.
enum { HL_OWN_SLOTS = 8192 };
static struct hl_own_slot {
  _Atomic uintptr_t lo, hi;
} hl_own[HL_OWN_SLOTS];
static _Atomic uint32_t hl_own_used;  // slots past this one were never taken
_Atomic int hl_own_overflow;

void hl_own_add(void *p, size_t bytes) {
  uintptr_t lo = (uintptr_t)p, hi = (lo + bytes + 4095) & ~(uintptr_t)4095;
  for (uint32_t i = 0; i < HL_OWN_SLOTS; i++) {
    uintptr_t empty = 0;
    if (atomic_load_explicit(&hl_own[i].lo, memory_order_relaxed) ||
        !atomic_compare_exchange_strong(&hl_own[i].lo, &empty, lo))
      continue;
    atomic_store(&hl_own[i].hi, hi);
    uint32_t used = atomic_load(&hl_own_used);
    while (used < i + 1 && !atomic_compare_exchange_weak(&hl_own_used, &used, i + 1)) {
    }
    return;
  }
  atomic_store(&hl_own_overflow, 1);
}

void hl_own_remove(void *p) {
  uint32_t used = atomic_load(&hl_own_used);
  for (uint32_t i = 0; i < used; i++)
    if (atomic_load(&hl_own[i].lo) == (uintptr_t)p) {
      atomic_store(&hl_own[i].hi, 0);
      atomic_store(&hl_own[i].lo, 0);
      return;
    }
}

// Copies the registered mappings (those with both ends) into `out`, up to `max`; returns how
// many it copied.
size_t hl_own_ranges(uintptr_t (*out)[2], size_t max) {
  size_t n = 0;
  uint32_t used = atomic_load(&hl_own_used);
  for (uint32_t i = 0; i < used && n < max; i++) {
    uintptr_t lo = atomic_load(&hl_own[i].lo), hi = atomic_load(&hl_own[i].hi);
    if (lo && hi > lo) out[n][0] = lo, out[n++][1] = hi;
  }
  return n;
}

void hl_spin_lock(_Atomic int *lock) {
  for (unsigned spins = 0;; spins++) {
    int expected = 0;
    if (atomic_compare_exchange_weak_explicit(lock, &expected, 1, memory_order_acquire,
                                              memory_order_relaxed))
      return;
    if (spins > 64) sched_yield();  // the holder may be descheduled on a 2-core machine
#if defined(__x86_64__) || defined(__i386__)
    else __builtin_ia32_pause();
#endif
  }
}

void hl_spin_unlock(_Atomic int *lock) { atomic_store_explicit(lock, 0, memory_order_release); }

// The stderr the program started with: the shim writes to descriptor 2 only while it is still
// that, never into a file that the program opened there after closing its stderr.
static dev_t hl_stderr_dev;
static ino_t hl_stderr_ino;
static int hl_stderr_known;

void hl_log_init(void) {
  struct stat st;
  hl_stderr_known = fstat(2, &st) == 0 ? 1 : -1;
  if (hl_stderr_known > 0) hl_stderr_dev = st.st_dev, hl_stderr_ino = st.st_ino;
}

void hl_log(const char *msg, const char *detail) {
  int saved = errno;
  struct stat st;
  if (hl_stderr_known < 0 ||
      (hl_stderr_known > 0 && (fstat(2, &st) != 0 || st.st_dev != hl_stderr_dev ||
                               st.st_ino != hl_stderr_ino))) {
    errno = saved;
    return;
  }
  char line[512];
  size_t n = 0;
  const char *parts[] = {"heapline: ", msg, detail ? detail : "", "\n"};
  for (int i = 0; i < 4; i++) {
    size_t len = strlen(parts[i]);
    if (n + len >= sizeof line) len = sizeof line - n - 1;
    memcpy(line + n, parts[i], len);
    n += len;
  }
  int held = hl_cancel_hold();
  ssize_t ignored = write(2, line, n);
  (void)ignored;
  hl_cancel_release(held);
  errno = saved;
}

void hl_block_signals(int stop_too, void *old) {
  sigset_t set;
  sigfillset(&set);
  if (!stop_too) sigdelset(&set, hl_stopworld_signal());
  pthread_sigmask(SIG_SETMASK, &set, old);
}

int hl_cancel_hold(void) {
  int old = PTHREAD_CANCEL_DISABLE;
  pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &old);
  return old;
}

void hl_cancel_release(int held) {
  if (held == PTHREAD_CANCEL_ENABLE) pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, &held);
}

// Installs `handler` for signal `sig`, when it names one (1 up to NSIG), for the shim's
// mark and leak-scan signals. Returns whether it did.
int hl_install_handler(int sig, void (*handler)(int)) {
  if (sig <= 0 || sig >= NSIG) return 0;
  struct sigaction action;
  memset(&action, 0, sizeof action);
  action.sa_handler = handler;
  action.sa_flags = SA_RESTART;
  sigemptyset(&action.sa_mask);
  return sigaction(sig, &action, NULL) == 0;
}

// An environment variable given in milliseconds, in nanoseconds; 0 when unset.
uint64_t hl_env_ms_as_ns(const char *name) {
  const char *value = hl_option(name);
  return value ? (uint64_t)atoll(value) * 1000000u : 0;
}
