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
/// recording is already running.
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

/// Restores the scope that was current before the `heapline_scope_push` that returned `token`.
void heapline_scope_pop(uint32_t token);

/// The number of bytes currently live in the category named by a scope, as the live table sees
/// them; and the number of live blocks. For tests and diagnostics.
uint64_t heapline_scope_live_bytes(const char *name, uint64_t *blocks);

#ifdef __cplusplus
}
#endif

#endif
