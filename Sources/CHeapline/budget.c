// Warnings that `heapline record` schedules: at given times (--warn-at), and from a memory
// budget (--memory-limit). The sampler checks both at every RSS sample. Against a budget, the
// footprint is RSS: warning at 80 %, urgent at 90 %, critical at 95 %, each raised once when it
// is crossed and again only after the footprint has fallen 5 % of the budget below it, so that
// a footprint hovering on a threshold does not raise a warning at every sample. At 100 % the
// process ends as a low-memory kill ends it: with SIGKILL, after the trace is complete.
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "heapline.h"
#include "internal.h"

extern struct hl_buffer *hl_sampler_buffer;
void hl_sampler_housekeeping(int modules);

enum { HL_MAX_WARN_AT = 64 };

static uint64_t hl_warn_at_ns[HL_MAX_WARN_AT];
static uint8_t hl_warn_at_level[HL_MAX_WARN_AT];
static int hl_warn_at_count, hl_warn_at_next;
static uint64_t hl_limit;
static int hl_fired[HEAPLINE_PRESSURE_CRITICAL + 1];
static const uint64_t hl_percent[HEAPLINE_PRESSURE_CRITICAL + 1] = {0, 80, 90, 95};

static uint64_t percent_of(uint64_t bytes, uint64_t percent) {
  return (uint64_t)((unsigned __int128)bytes * percent / 100);
}

// HEAPLINE_WARN_AT_MS is "MS[:LEVEL],MS[:LEVEL]...", in increasing times (the CLI sorts them).
void hl_budget_install(void) {
  const char *at = hl_option("HEAPLINE_WARN_AT_MS");
  while (at && *at && hl_warn_at_count < HL_MAX_WARN_AT) {
    char *end;
    unsigned long long ms = strtoull(at, &end, 10);
    int level = HEAPLINE_PRESSURE_WARNING;
    if (*end == ':') level = (int)strtol(end + 1, &end, 10);
    if (level < HEAPLINE_PRESSURE_NORMAL || level > HEAPLINE_PRESSURE_CRITICAL)
      level = HEAPLINE_PRESSURE_WARNING;
    hl_warn_at_ns[hl_warn_at_count] = (uint64_t)ms * 1000000u;
    hl_warn_at_level[hl_warn_at_count++] = (uint8_t)level;
    if (*end != ',') break;
    at = end + 1;
  }
  const char *limit = hl_option("HEAPLINE_MEMORY_LIMIT");
  hl_limit = limit ? strtoull(limit, NULL, 10) : 0;
}

void hl_budget_tick(struct hl_buffer *b, uint64_t now, uint64_t rss) {
  while (hl_warn_at_next < hl_warn_at_count && hl_warn_at_ns[hl_warn_at_next] <= now) {
    hl_pressure_raise(b, hl_warn_at_level[hl_warn_at_next], HL_SOURCE_TIMER, now, rss, hl_limit, 1);
    hl_warn_at_next++;
  }
  if (!hl_limit) return;
  // Levels in order, so that a footprint that jumps past several thresholds raises each.
  for (int level = HEAPLINE_PRESSURE_WARNING; level <= HEAPLINE_PRESSURE_CRITICAL; level++) {
    uint64_t threshold = percent_of(hl_limit, hl_percent[level]);
    if (!hl_fired[level] && rss >= threshold) {
      hl_fired[level] = 1;
      hl_pressure_raise(b, level, HL_SOURCE_LIMIT, now, rss, hl_limit, 1);
    } else if (hl_fired[level] && rss + percent_of(hl_limit, 5) < threshold) {
      hl_fired[level] = 0;
    }
  }
  if (rss >= hl_limit) hl_memory_limit_kill(now, rss, hl_limit);
}

// On the sampler's thread. The trace gets the MEMORY_LIMIT record, the footprint and its
// trailer before the kill, so that the recorder can write the low-memory report from it.
void hl_memory_limit_kill(uint64_t now, uint64_t rss, uint64_t limit) {
  struct hl_buffer *b = hl_sampler_buffer;
  hl_tls.guard++;
  hl_ensure(b, 1 + 3 * 10);
  hl_put_u8(b, HL_TAG_MEMORY_LIMIT);
  hl_put_time(b, now);
  hl_put_varint(b, rss);
  hl_put_varint(b, limit);
  hl_commit_record(b);
  struct hl_footprint footprint;  // while recording: see hl_footprint_measure
  hl_footprint_measure(&footprint);
  footprint.rss = rss;
  hl_footprint_write(b, HL_FOOTPRINT_LIMIT, &footprint);
  atomic_store(&hl_state, HL_STOPPING);
  hl_sampler_housekeeping(1);
  hl_flush_all(1);
  hl_writer_close(HL_END_MEMORY_LIMIT);
  kill(getpid(), SIGKILL);
  for (;;) pause();
}
