// Rotation (HEAPLINE_ROTATE_SECONDS, `heapline record --rotate`): every period the recording
// moves on to a new file, BASE.NNNN-YYYYMMDDTHHMMSSZ.trace, where BASE is the path asked for less
// a final ".trace", NNNN the file's sequence number from 0001 and the time the file's start in
// UTC. The file before gets its trailer and is synced first, so a SIGKILL loses at most the
// current file's tail.
//
// The switch runs on the shim's own thread, never in a hook. It holds every thread's buffer at
// once (threads.c), so no thread is inside an event: the records written so far and the live
// table agree. Each new file is complete on its own: the module map, the categories, the Swift
// type names, every stack node, the sampling record and one CARRIED record per live block (its
// original id, size, stack and category, at the file's start time), which readers count as live
// but not as an allocation of the file.
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

enum { HL_NAME_MAX = 4096 };

static uint64_t hl_period_ns;  // 0: one file
static uint64_t hl_next_ns;
static uint32_t hl_sequence;
static char hl_base[HL_NAME_MAX];
static char hl_current[HL_NAME_MAX];
static int hl_in_process;
static _Atomic int hl_rotation_lock;
static _Atomic int hl_rotation_off;

extern struct hl_buffer *hl_sampler_buffer;
void hl_sampler_housekeeping(int modules);
void hl_categories_emit_all(struct hl_buffer *b);
void hl_stacks_emit_all(struct hl_buffer *b);
int hl_hold_all(void);
void hl_release_all(void);
void hl_forget_infos_all(void);
int hl_leaks_try_hold(void);
void hl_leaks_release(void);

// YYYYMMDDTHHMMSSZ from Unix seconds, without gmtime: its first call reads the time zone files
// through the program's malloc.
static void utc_stamp(uint64_t seconds, char out[17]) {
  int64_t days = (int64_t)(seconds / 86400), rest = (int64_t)(seconds % 86400);
  // Howard Hinnant's civil_from_days.
  int64_t z = days + 719468, era = z / 146097, doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100), mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1, m = mp < 10 ? mp + 3 : mp - 9;
  int64_t y = yoe + era * 400 + (m <= 2);
  snprintf(out, 17, "%04d%02d%02dT%02d%02d%02dZ", (int)y, (int)m, (int)d, (int)(rest / 3600),
           (int)(rest / 60 % 60), (int)(rest % 60));
}

static int name_file(uint32_t sequence) {
  struct timespec real;
  clock_gettime(CLOCK_REALTIME, &real);
  char stamp[17];
  utc_stamp((uint64_t)real.tv_sec, stamp);
  int n = snprintf(hl_current, sizeof hl_current, "%s.%04u-%s.trace", hl_base, sequence, stamp);
  return n > 0 && (size_t)n < sizeof hl_current;
}

// The highest sequence number of BASE.NNNN-….trace in the base's directory, 0 when none: a
// program that an exec'd one replaced, or an earlier in-process recording to the same path, left
// those, and the numbering goes on after them rather than writing over them. Read with
// getdents64 into a buffer on the stack: opendir would allocate in the program's heap.
static uint32_t highest_existing(void) {
  const char *slash = strrchr(hl_base, '/');
  char directory[HL_NAME_MAX] = ".";
  if (slash) {
    size_t len = slash == hl_base ? 1 : (size_t)(slash - hl_base);
    memcpy(directory, hl_base, len);
    directory[len] = 0;
  }
  const char *stem = slash ? slash + 1 : hl_base;
  size_t n = strlen(stem);
  int fd = open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return 0;
  char buffer[4096];
  uint32_t best = 0;
  long got;
  while ((got = syscall(SYS_getdents64, fd, buffer, sizeof buffer)) > 0) {
    for (long at = 0; at < got;) {
      struct dirent64 *entry = (struct dirent64 *)(buffer + at);
      const char *name = entry->d_name;
      if (strncmp(name, stem, n) == 0 && name[n] == '.' && name[n + 1] >= '0' &&
          name[n + 1] <= '9') {
        unsigned long seq = strtoul(name + n + 1, NULL, 10);
        if (seq > best && seq < UINT32_MAX) best = (uint32_t)seq;
      }
      at += entry->d_reclen;
    }
  }
  close(fd);
  return best;
}

const char *hl_rotate_first_path(const char *path, int in_process) {
  long seconds = hl_option_long("HEAPLINE_ROTATE_SECONDS", 0, 1, 1L << 30);
  hl_period_ns = (uint64_t)seconds * 1000000000u;
  atomic_store(&hl_rotation_off, 0);
  if (!hl_period_ns) return path;
  size_t len = strlen(path);
  if (len > 6 && strcmp(path + len - 6, ".trace") == 0) len -= 6;
  if (len >= sizeof hl_base - 40) return path;  // no room for the suffix: one file
  memcpy(hl_base, path, len);
  hl_base[len] = 0;
  hl_in_process = in_process;
  hl_sequence = highest_existing() + 1;
  hl_next_ns = hl_period_ns;
  return name_file(hl_sequence) ? hl_current : path;
}

// CARRIED: a block live when this file began, under its original id.
struct carry {
  struct hl_buffer *b;
  uint64_t time;
};

static void emit_carried(const struct hl_block *blk, uint32_t ref, void *context) {
  (void)ref;
  struct carry *c = context;
  struct hl_buffer *b = c->b;
  hl_ensure(b, 1 + 7 * 10);
  hl_put_u8(b, HL_TAG_CARRIED);
  hl_put_time(b, c->time);
  hl_put_varint(b, blk->serial);
  hl_put_varint(b, blk->counter);
  hl_put_varint(b, blk->size);
  hl_put_varint(b, blk->stack);
  hl_put_varint(b, blk->category ? blk->category : hl_size_class(blk->size));
  hl_put_varint(b, blk->addr);
  hl_commit_record(b);
}

// What a new file starts with, into the shim's buffer; every program thread's buffer is held.
static void start_file(struct hl_buffer *b, uint64_t now) {
  if (hl_sample_bytes) hl_emit_sampling(b, hl_sample_bytes);  // at time 0, as in every trace
  hl_emit_rss(b, now, hl_read_rss(), 0);
  if (hl_sample_bytes) hl_counts_emit_carried(b, now);
  hl_categories_emit_all(b);
  hl_swift_begin();  // every Swift type name again
  hl_stacks_emit_all(b);
  hl_live_lock_all();
  hl_live_each_locked(emit_carried, &(struct carry){b, now});
  hl_live_unlock_all();
  hl_sampler_housekeeping(0);  // names the Swift types; flushes. The modules come once the
                               // buffers are let go (hl_rotate_poll): a reader takes them anywhere
}

uint64_t hl_rotate_due(void) {
  return hl_period_ns && !atomic_load(&hl_rotation_off) ? hl_next_ns : UINT64_MAX;
}

// On the shim's thread, every tick.
void hl_rotate_poll(uint64_t now) {
  if (now < hl_rotate_due()) return;
  if (atomic_exchange(&hl_rotation_lock, 1)) return;
  // A leak scan stops this thread wherever it is: never in the middle of a switch.
  if (!hl_leaks_try_hold()) {
    atomic_store(&hl_rotation_lock, 0);
    return;
  }
  struct hl_buffer *b = hl_sampler_buffer;
  hl_sampler_housekeeping(1);
  if (!atomic_load(&hl_rotation_off) && hl_hold_all()) {
    hl_lost_poll(b, now);
    hl_rss_sample(b, now, hl_read_rss());  // the file's last: a peak since its last sample is its
    hl_sampler_housekeeping(0);  // names the classes of the allocations that holding finished
    uint32_t next = hl_sequence + 1;
    int started = name_file(next) && hl_writer_next(hl_current, hl_in_process) == 0;
    if (started) {
      hl_sequence = next;
      hl_forget_infos_all();
      start_file(b, hl_now());
    }
    hl_release_all();
    if (started) {  // the new file's module map, which the loader's lock gives (see above)
      hl_modules_emit_if_changed(b, 1);
      hl_buffer_flush(b);
    }
    while (hl_next_ns <= now) hl_next_ns += hl_period_ns;
  }
  hl_leaks_release();
  atomic_store(&hl_rotation_lock, 0);
}

// Before the recording ends (exit, stop, exec): no switch may start any more, and one under way
// is waited for.
void hl_rotate_stop(void) {
  atomic_store(&hl_rotation_off, 1);
  while (atomic_load(&hl_rotation_lock)) sched_yield();
}

// The file being written (the path asked for when not rotating).
const char *hl_rotate_current(void) { return hl_period_ns ? hl_current : NULL; }

// In a fork child: the files are the parent's.
void hl_rotate_forget(void) {
  hl_period_ns = 0;
  atomic_store(&hl_rotation_lock, 0);
}
