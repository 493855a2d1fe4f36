// Every HEAPLINE_* setting, read once when the shim loads, from one table; then the program's
// environment is scrubbed of them and of the preload entry, so that the program, and every
// program it runs, sees the environment it would have untraced.
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const char *const hl_names[] = {
    "HEAPLINE_OUTPUT",          "HEAPLINE_RECORDER_PID",   "HEAPLINE_DEPTH",
    "HEAPLINE_SHARED",          "HEAPLINE_MARK_SIGNAL",    "HEAPLINE_MARK_EVERY_MS",
    "HEAPLINE_LEAKS_AT_EXIT",   "HEAPLINE_LEAKS_SIGNAL",   "HEAPLINE_LEAKS_EVERY_MS",
    "HEAPLINE_WARN_AT_MS",      "HEAPLINE_MEMORY_LIMIT",   "HEAPLINE_WARN_SIGNAL",
    "HEAPLINE_PSI",             "HEAPLINE_SAMPLE_MS",      "HEAPLINE_STOP_SIGNAL",
    "HEAPLINE_PRELOAD",         "HEAPLINE_VERIFY_UNWIND",  "HEAPLINE_SAMPLE_BYTES",
    "HEAPLINE_LEAKS_GRAPH",     "HEAPLINE_ROTATE_SECONDS", "HEAPLINE_TRACE_MODE",
};
enum { HL_OPTIONS = sizeof hl_names / sizeof *hl_names, HL_OPTION_BYTES = 8192 };
static const char *hl_values[HL_OPTIONS];
static char hl_store[HL_OPTION_BYTES];  // copies: the environment's strings are about to go
static size_t hl_used;
static int hl_loaded;

// The environment is read and scrubbed here, in place in `environ`, not through getenv and
// unsetenv: a program may define those itself, and its own answer for the whole process. bash
// does: its unsetenv, called before its main, did nothing, and bash and every program it ran
// saw the shim's settings and LD_PRELOAD (each child loaded the shim again, and bash, importing
// eleven variables more, made 70 allocations more than untraced).
extern char **environ;

// Whether `entry` ("NAME=value") is of `name`.
static int is_entry_of(const char *entry, const char *name) {
  size_t len = strlen(name);
  return strncmp(entry, name, len) == 0 && entry[len] == '=';
}

static char **find_entry(const char *name) {
  for (char **entry = environ; entry && *entry; entry++)
    if (is_entry_of(*entry, name)) return entry;
  return NULL;
}

static char *read_env(const char *name) {
  char **entry = find_entry(name);
  return entry ? *entry + strlen(name) + 1 : NULL;
}

// As glibc's unsetenv: every entry of `name` goes, the ones after it move down.
static void remove_env(const char *name) {
  for (char **entry; (entry = find_entry(name));)
    do entry[0] = entry[1];
    while (*entry++);
}

static const char *keep(const char *value) {
  size_t len = strlen(value);
  if (hl_used + len + 1 > sizeof hl_store) return NULL;
  char *copy = memcpy(hl_store + hl_used, value, len + 1);
  hl_used += len + 1;
  return copy;
}

// Takes the preload library out of LD_PRELOAD, in place: HEAPLINE_PRELOAD names it. The loader
// has read LD_PRELOAD already; what the program and its children see must not carry it.
// HEAPLINE_PRELOAD_WAS, from `heapline record` and an exec's shim, says what the program's own
// was: "+" and its value, exactly (which is never longer than the list the loader read), or
// "-" for none. Taken apart instead, an empty LD_PRELOAD went missing and one with spaces lost
// them. Without it (a recording begun by hand), the library's entry alone is taken out.
static void scrub_preload(const char *library, const char *was) {
  char *list = read_env("LD_PRELOAD");
  if (!list || !library || !*library) return;
  if (was && (*was == '-' || (*was == '+' && strlen(was + 1) <= strlen(list)))) {
    if (*was == '-') remove_env("LD_PRELOAD");
    else memmove(list, was + 1, strlen(was + 1) + 1);
    return;
  }
  size_t want = strlen(library);
  char *out = list;
  int kept = 0;
  for (char *entry = list; *entry;) {
    size_t n = strcspn(entry, ": ");
    char *next = entry + n + (entry[n] ? 1 : 0);
    if (n && !(n == want && memcmp(entry, library, n) == 0)) {
      if (kept++) *out++ = ':';
      memmove(out, entry, n);
      out += n;
    }
    entry = next;
  }
  *out = 0;
  if (!kept) remove_env("LD_PRELOAD");
}

void hl_options_load(void) {
  if (hl_loaded) return;
  hl_loaded = 1;
  for (int i = 0; i < HL_OPTIONS; i++) {
    const char *value = read_env(hl_names[i]);
    if (value) hl_values[i] = keep(value);
  }
  // Only a program that `heapline record` started is scrubbed: a Swift test that links the shim
  // runs with the environment its runner gave it.
  if (!hl_values[0]) return;
  // Not a setting: read once, here, and never passed on (an exec's shim says its own, exec.c)
  scrub_preload(hl_option("HEAPLINE_PRELOAD"), read_env("HEAPLINE_PRELOAD_WAS"));
  remove_env("HEAPLINE_PRELOAD_WAS");
  for (int i = 0; i < HL_OPTIONS; i++) remove_env(hl_names[i]);
}

// Whether `entry` ("NAME=value") is one of the shim's settings, or what it says of LD_PRELOAD.
int hl_is_setting(const char *entry) {
  if (is_entry_of(entry, "HEAPLINE_PRELOAD_WAS")) return 1;
  for (int i = 0; i < HL_OPTIONS; i++)
    if (is_entry_of(entry, hl_names[i])) return 1;
  return 0;
}

const char *hl_option(const char *name) {
  for (int i = 0; i < HL_OPTIONS; i++)
    if (strcmp(hl_names[i], name) == 0) return hl_values[i];
  return NULL;
}

// A whole number from `min` to `max`; anything else is reported once and the fallback used.
long hl_option_long(const char *name, long fallback, long min, long max) {
  const char *text = hl_option(name);
  if (!text || !*text) return fallback;
  char *end;
  long v = strtol(text, &end, 10);
  if (*end || v < min || v > max) {
    hl_log("ignoring a bad value of ", name);
    return fallback;
  }
  return v;
}

// Every setting as "NAME=value", for the program an exec starts; returns how many.
size_t hl_options_export(char **out, size_t max) {
  extern void *__libc_malloc(size_t);
  size_t n = 0;
  for (int i = 0; i < HL_OPTIONS && n < max; i++) {
    if (!hl_values[i]) continue;
    size_t a = strlen(hl_names[i]), b = strlen(hl_values[i]);
    char *entry = __libc_malloc(a + b + 2);
    if (!entry) break;
    memcpy(entry, hl_names[i], a);
    entry[a] = '=';
    memcpy(entry + a + 1, hl_values[i], b + 1);
    out[n++] = entry;
  }
  return n;
}
