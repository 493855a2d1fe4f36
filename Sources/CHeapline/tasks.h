// A process's threads, as /proc lists them, read with raw system calls only. The ptrace helper
// (stopptrace.c) runs on the scanning thread's TLS, where a glibc wrapper could set errno under
// the scanner's feet, and the signal path (stopworld.c) reads them with the world half stopped.
#ifndef HEAPLINE_TASKS_H
#define HEAPLINE_TASKS_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

// A system call that reports failure as -errno and never touches errno.
long hl_raw6(long n, long a, long b, long c, long d, long e, long f);
#define hl_raw(n, a, b, c, d) hl_raw6(n, (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

uint64_t hl_raw_monotonic_ns(void);

// `ns` nanoseconds as a timespec, for the sleeps and waits of raw system calls and nanosleep.
static inline struct timespec hl_span(uint64_t ns) {
  return (struct timespec){(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)};
}

// The threads of process `tgid`, up to `capacity` of them; their count, or -errno.
int hl_tasks_list(int32_t tgid, int32_t *tids, int capacity);

// Reads /proc/TGID/task/TID/LEAF into `text`, NUL-terminated; its length, or -errno.
long hl_task_read(int32_t tgid, int32_t tid, const char *leaf, char *text, size_t capacity);

// The state letter of thread `tid` of `tgid` in its /proc stat ('R', 'S', 'Z', 't', ...), or 0
// when it is gone.
char hl_task_state(int32_t tgid, int32_t tid);

// Whether the state means the thread has exited: it will never run, answer or stop again.
static inline int hl_task_state_dead(char state) { return !state || state == 'Z' || state == 'X'; }

// "/proc/TGID/task/TID/LEAF" into `path` (64 bytes).
void hl_task_path(char *path, int32_t tgid, int32_t tid, const char *leaf);

#endif
