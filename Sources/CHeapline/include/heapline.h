// Heapline's one public C header: the API that programs and the Swift module call.
// The malloc family itself is interposed by defining the libc symbols, so it needs no header.
#ifndef HEAPLINE_H
#define HEAPLINE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Starts recording into `path` (created or truncated). `depth` is the maximum number of frames
/// per stack (0 means the default, 64). Returns 0, or an errno value. Fails with EBUSY when a
/// recording is already running, and with ENOTSUP when the process allocates with another
/// allocator than glibc's (jemalloc, tcmalloc, mimalloc), which is not traced.
int heapline_start(const char *path, unsigned depth);

/// Flushes every thread's buffer, writes the trailer and closes the trace. Returns 0, or an errno
/// value (EINVAL when nothing is recording).
int heapline_stop(void);

/// Non-zero while a recording is running in this process.
int heapline_is_recording(void);

/// Writes every thread's buffered events to the trace now.
void heapline_flush(void);

/// Writes a mark named `name` at this instant: a generation boundary for `heapline diff`.
void heapline_mark(const char *name);

/// Makes `name` the category of everything this thread allocates until the matching pop.
/// Returns a token for `heapline_scope_pop`. Scopes nest.
uint32_t heapline_scope_push(const char *name);

/// Restores the scope that was current before the `heapline_scope_push` that returned `token`;
/// a token that no push returned is ignored.
void heapline_scope_pop(uint32_t token);

/// Watches the Swift task `task` (NULL to stop): every allocation that it makes, on whatever
/// thread runs it, is noted, until the next watch; one task at a time. Returns 0 when this is no
/// Swift process (or no memory for the notes). For the in-process async leak check.
int heapline_watch_task(const void *task);

/// How many of the watched task's allocations are kept: 256 MiB of address space, mapped at the
/// first watch, whose pages are used only as notes fill them.
enum { HEAPLINE_WATCHED_MAX = 1 << 24 };

/// The alloc ids (thread serial, alloc counter) of the allocations the watched task made, up to
/// `capacity` of them and HEAPLINE_WATCHED_MAX; returns how many there were, which may be more.
size_t heapline_watched_allocations(uint32_t *serials, uint64_t *counters, size_t capacity);

/// The number of bytes currently live in the category named by a scope, as the live table sees
/// them; and the number of live blocks. For tests and diagnostics.
uint64_t heapline_scope_live_bytes(const char *name, uint64_t *blocks);

/// The bytes that the shim's live table has mapped, all in, and the number of live blocks it
/// holds: what tracing costs per live block. For tests and diagnostics.
uint64_t heapline_live_table_bytes(uint64_t *blocks);

/// Reports `bytes` of memory that the caller maps itself, outside malloc (a pixel buffer from
/// mmap, say), under the category `category`, until `heapline_backing_free(id)`. `id` names the
/// store (its address will do) and is unique among live stores; reporting a live id again
/// replaces it. The shim counts reported stores whether or not a recording is running, and
/// writes them to the trace while one is.
///
///     void *pixels = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
///                         -1, 0);
///     heapline_backing_alloc((uintptr_t)pixels, size, "Decoded images");
///     ...
///     heapline_backing_free((uintptr_t)pixels);
///     munmap(pixels, size);
void heapline_backing_alloc(uint64_t id, uint64_t bytes, const char *category);

/// Reports that the backing store `id` was released. Returns its bytes, 0 when it is unknown.
uint64_t heapline_backing_free(uint64_t id);

/// The bytes and the number of backing stores reported now under `category`, or under every
/// category when `category` is NULL.
uint64_t heapline_backing_bytes(const char *category, uint64_t *stores);

/// Memory pressure levels. A warning asks observers to free what they can spare; urgent and
/// critical ask for more (the image cache keeps half, a quarter, nothing of its cost limit).
enum {
  HEAPLINE_PRESSURE_NORMAL = 0,
  HEAPLINE_PRESSURE_WARNING = 1,
  HEAPLINE_PRESSURE_URGENT = 2,
  HEAPLINE_PRESSURE_CRITICAL = 3
};

/// A memory-pressure observer: frees what it can for `level` and returns the bytes it freed.
typedef uint64_t (*heapline_pressure_observer)(int level, void *context);

/// Registers `observer`, named `name` in traces and low-memory reports. Observers run on the
/// thread that simulates a warning, or on the shim's pressure thread for warnings from a
/// signal, a timer, a memory limit or the kernel (PSI). Returns a token for
/// `heapline_pressure_remove_observer`, or -1 when the table (64 observers) is full.
///
///     static uint64_t purge(int level, void *cache) { return cache_trim(cache, level); }
///     int token = heapline_pressure_add_observer("tile cache", purge, cache);
int heapline_pressure_add_observer(const char *name, heapline_pressure_observer observer,
                                   void *context);

/// Unregisters an observer. Once it returns, the observer is not running and will not run.
void heapline_pressure_remove_observer(int token);

/// Raises a memory warning of `level` now, as Xcode's Simulate Memory Warning does: writes it to
/// the trace when recording, runs every observer on this thread, and returns the bytes they
/// freed together.
uint64_t heapline_pressure_simulate(int level);

/// Watches the kernel's pressure stall information (`/proc/pressure/memory`) with `trigger`
/// (for example "some 150000 1000000": 150 ms of stall within 1 s; NULL for that default) and
/// raises a warning each time it fires. Returns 0, ENOENT when the kernel has no PSI, or another
/// errno value (EINVAL for a trigger the kernel refuses).
int heapline_pressure_monitor_psi(const char *trigger);

/// Stops watching PSI (after heapline_pressure_monitor_psi); a no-op when not watching.
void heapline_pressure_stop_psi(void);

/// What one leak scan found. Lost blocks are those no path from the program's roots reaches;
/// possibly lost ones are reached only through a pointer into their middle.
struct heapline_leak_summary {
  uint64_t scan;  /// the scan's number in the trace: 1, 2, 3... in each recording
  uint64_t lost_blocks, lost_bytes;
  uint64_t possibly_lost_blocks, possibly_lost_bytes;
};

/// Scans the process for leaks now, with the other threads stopped for the length of the scan,
/// and writes the result to the trace (`heapline leaks` reads it). Fills `summary` when it is not
/// NULL, and leaves errno as it was. Returns 0, or when the scan could not run (the trace then
/// says why): EINVAL when nothing is recording, ENOMEM when there is no memory for it, EIO when
/// the process's threads cannot be listed (/proc/self/task), ETIMEDOUT when they could not be
/// stopped in time, EOVERFLOW when a block lies above 2^48.
///
///     struct heapline_leak_summary found;
///     if (heapline_check_leaks(&found) == 0 && found.lost_blocks) report(found.lost_bytes);
int heapline_check_leaks(struct heapline_leak_summary *summary);

/// Zeroes the calling thread's dead stack below the caller's frame (up to 64 KiB), where
/// returned functions left copies of pointers that would hide a leak from the next check. Call
/// it right before heapline_check_leaks(), from the function that called the code under test.
void heapline_clear_stack(void);

/// Makes `bytes` from `start` a root of leak scans: memory the scan would not otherwise read
/// (a region from mmap, say) that holds pointers to heap blocks. Returns 0, EINVAL, or ENOSPC
/// when 256 regions are registered already.
int heapline_register_root(const void *start, size_t bytes);

/// Removes the root region that starts at `start`.
void heapline_unregister_root(const void *start);

#ifdef __cplusplus
}
#endif

#endif
