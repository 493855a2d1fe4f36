// Starting and stopping a recording: from the environment when preloaded by `heapline record`,
// or through the API in process. Also the process events the shim must survive: early calls,
// fork and exit.
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "heapline.h"
#include "unwind.h"

_Atomic int hl_state = HL_UNINIT;
char hl_trace_path[4096];  // of the recording started from the environment
pid_t hl_recording_pid;    // the process that recording traces
static unsigned hl_env_depth;
unsigned hl_depth = HL_DEFAULT_DEPTH;
extern struct hl_buffer *hl_sampler_buffer;
void hl_sampler_housekeeping(int modules);
void hl_sampler_forget(void);
void hl_categories_emit_all(struct hl_buffer *b);
static _Atomic int hl_control_lock;

static void hl_fork_child(void) {
  if (atomic_load(&hl_state) == HL_OFF) return;
  // The trace belongs to the parent. The child neither writes to it nor records: a program it
  // executes is a new process, which `heapline record` does not trace.
  atomic_store(&hl_state, HL_OFF);
  hl_threads_after_fork_child();
  hl_shared_drop_buffer(hl_sampler_buffer);  // the parent's, like the threads' buffers
  hl_sampler_buffer = NULL;
  hl_shared_detach_in_child();
  hl_sampler_forget();
  hl_pressure_after_fork_child();
  hl_rotate_forget();
  hl_writer_abandon();
}

static int begin(const char *path, unsigned depth, int in_process) {
  hl_depth = depth ? (depth > HL_MAX_DEPTH ? HL_MAX_DEPTH : depth) : HL_DEFAULT_DEPTH;
  hl_clock_start();
  hl_shared_begin();
  int err = hl_writer_open(hl_rotate_first_path(path, in_process), in_process);
  if (err) return err;
  hl_threads_init();
  hl_stacks_init();
  hl_stacks_reset();
  hl_live_clear();
  hl_sampling_begin();
  uint32_t recording = hl_threads_begin_recording();
  if (!hl_sampler_buffer) hl_sampler_buffer = hl_shared_new_buffer();
  if (!hl_sampler_buffer) return ENOMEM;
  hl_buffer_reset(hl_sampler_buffer, 0, (uint32_t)getpid(), recording);
  // Only the shim's thread writes it, with no handing over; in use, so that the recorder
  // writes what it holds (modules, samples, marks) if the process dies.
  atomic_store(&hl_sampler_buffer->state, HL_BUF_BUSY);
  hl_swift_begin();
  hl_categories_emit_all(hl_sampler_buffer);
  hl_modules_emit_if_changed(hl_sampler_buffer, 1);
  hl_rss_begin(hl_sampler_buffer);
  if (hl_sample_bytes) hl_emit_sampling(hl_sampler_buffer, hl_sample_bytes);
  hl_buffer_flush(hl_sampler_buffer);
  atomic_store(&hl_state, HL_ON);
  return 0;
}

// Beginning and ending a recording open, write and close files and join the shim's thread: each a
// cancellation point, in a thread that may have a cancel pending (a thread cancelled before it
// exits or execs). Where the program made no such call, the shim must make none that acts: a
// cancel acting there left the trace's locks held, and every later thread waited for them.
static int hl_begin(const char *path, unsigned depth, int in_process) {
  int held = hl_cancel_hold();
  int err = begin(path, depth, in_process);
  hl_cancel_release(held);
  return err;
}

static void hl_end(int reason) {
  int held = hl_cancel_hold();
  hl_rotate_stop();
  hl_pressure_quiesce();
  // Measured while recording: once it stops, frees no longer leave the live table first.
  struct hl_footprint footprint;
  if (!hl_sample_bytes) hl_footprint_measure(&footprint);
  atomic_store(&hl_state, HL_STOPPING);
  hl_sampler_stop();
  hl_marks_poll(hl_sampler_buffer, hl_now());
  hl_rss_sample(hl_sampler_buffer, hl_now(), hl_read_rss());
  hl_lost_poll(hl_sampler_buffer, hl_now());
  // Sampled, the live table holds the sampled blocks alone: no breakdown of RSS can be true.
  if (!hl_sample_bytes) hl_footprint_write(hl_sampler_buffer, HL_FOOTPRINT_END, &footprint);
  hl_flush_all(1);
  // After the final flush, whose last allocations may be the first of their classes: names the
  // last Swift types, writes the final module map
  hl_sampler_housekeeping(1);
  hl_unwind_report();
  hl_writer_close(reason);
  atomic_store(&hl_state, HL_OFF);
  hl_cancel_release(held);
}

static _Atomic int hl_probing, hl_probe_seen;  // hl_owns_malloc's test call

// The trace's path when this is the program that `heapline record` started; NULL otherwise.
// Only that program is traced, not the programs it runs (the environment is scrubbed, but a
// program may have copied it before the shim loaded).
static const char *recorder_output(void) {
  hl_options_load();
  const char *path = hl_option("HEAPLINE_OUTPUT");
  int mine = path && *path &&
             hl_option_long("HEAPLINE_RECORDER_PID", getppid(), 1, 1L << 30) == getppid();
  return mine ? path : NULL;
}

// The first hook call of the process, which may come before any constructor has run.
void hl_lazy_init(void) {
  if (atomic_load(&hl_probing)) {  // hl_owns_malloc's own call: it came here, so it is ours
    atomic_store(&hl_probe_seen, 1);
    return;
  }
  // A call before the C library has set up the environment (the dynamic linker's, for an audit
  // library that watches symbol bindings) goes untraced, and the next one looks again: deciding
  // then, from no settings at all, turned the recording off for good.
  if (!environ) return;
  if (hl_foreign_allocator()) {  // never recorded: see foreign.c
    atomic_store(&hl_state, HL_OFF);
    return;
  }
  static _Atomic int once;
  if (atomic_exchange(&once, 1)) return;  // another call is initializing: it goes untraced
  int saved_errno = errno;  // the program's, whatever starting a recording calls
  hl_tls.guard++;
  hl_log_init();
  const char *path = recorder_output();
  int mine = path != NULL;
  if (mine) hl_shared_attach(hl_option("HEAPLINE_SHARED"));
  unsigned depth = (unsigned)hl_option_long("HEAPLINE_DEPTH", 0, 1, HL_MAX_DEPTH);
  if (mine && strlen(path) < sizeof hl_trace_path) {
    memcpy(hl_trace_path, path, strlen(path) + 1);
    hl_recording_pid = getpid();
    hl_env_depth = depth;
  }
  int err = mine ? hl_begin(path, depth, 0) : 0;
  if (err) hl_log("cannot record: ", strerror(err));
  if (!mine || err) atomic_store(&hl_state, HL_OFF);
  hl_tls.guard--;
  errno = saved_errno;
}

// True when the process's malloc is this copy's. A program that links the shim itself (a Swift
// program using the Heapline module) and also runs with the preload library holds two copies;
// only the one whose hooks the process calls may record, or both would write the same trace.
// The test is a call: asking where `malloc` is would not do, since a non-PIE executable (Debian's
// python3) answers with its own PLT entry, which leads to this copy's hooks all the same.
static int hl_owns_malloc(void) {
  atomic_store(&hl_probing, 1);  // from here, a call to this copy's hooks is noted, nothing else
  void *(*process_malloc)(size_t) = (void *(*)(size_t))dlsym(RTLD_DEFAULT, "malloc");
  void (*process_free)(void *) = (void (*)(void *))dlsym(RTLD_DEFAULT, "free");
  if (process_malloc && process_free) process_free(process_malloc(16));
  atomic_store(&hl_probing, 0);
  return atomic_load(&hl_probe_seen) || !process_malloc;
}

// The preload library whose hooks the process never calls, in the program `heapline record`
// started: it tells the recorder why there is no trace (another copy of the shim that records
// has said so first, and is left alone).
static void note_foreign_malloc(const char *library) {
#ifdef HL_PRELOAD
  if (recorder_output()) hl_shared_note_foreign_malloc(hl_option("HEAPLINE_SHARED"), library);
#endif
}

// The recording ends in an exit handler that runs after every library's destructors and every
// other exit handler: exit runs its handlers last registered first, and this one is registered
// before any other. libc registers the loader's pass over the destructors when it starts the
// program, after the libraries' constructors; a library's constructor that registers a handler
// of its own (atexit, on_exit) registers this one first, through the wrappers below. Ended in
// the preload library's own destructor, which the loader runs before those of the libraries
// that the program links, the recording missed what their destructors allocated and freed, and
// the scan at exit missed what they leaked (memcheck found it); and a handler that a library's
// constructor registered ran after the recording had ended.
static _Atomic int hl_ends_after_destructors, hl_in_exit_handler;

static void finish_at_exit(void) {
  // A thread with a cancel pending may call exit: the scan's and the end's cancellation points
  // are the shim's, and the thread was cancelled in the scan, so the process went on.
  int held = hl_cancel_hold();
  hl_rotate_stop();  // the exit's scan goes in the last file
  hl_leaks_at_exit();  // with the recording still on (HEAPLINE_LEAKS_AT_EXIT)
  hl_tls.guard++;
  hl_end(HL_END_EXIT);
  hl_tls.guard--;
  hl_cancel_release(held);
}

static void hl_exit_handler(void *unused) {
  (void)unused;
  atomic_store(&hl_in_exit_handler, 1);
  if (atomic_load(&hl_state) == HL_ON) finish_at_exit();
}

#ifdef HL_PRELOAD
typedef int (*hl_cxa_atexit_fn)(void (*)(void *), void *, void *);
typedef int (*hl_on_exit_fn)(void (*)(int, void *), void *);

// glibc's, looked up once (a C++ program registers a destructor for each static object).
static hl_cxa_atexit_fn next_cxa_atexit(void) {
  static _Atomic(hl_cxa_atexit_fn) next;
  hl_cxa_atexit_fn f = atomic_load(&next);
  if (!f) atomic_store(&next, f = (hl_cxa_atexit_fn)hl_next_definition("__cxa_atexit"));
  return f;
}

// Once, when the process records: before the first handler registered through the wrappers,
// or in the constructor when none came first.
static int hl_owns_malloc(void);
static void register_exit_handler_first(void) {
  static _Atomic int tried;
  if (atomic_load(&tried)) return;
  // Only the copy of the shim whose hooks the process calls records (see hl_owns_malloc): a
  // program that links the module and runs with the preload library had both recording
  if (atomic_load(&hl_state) == HL_UNINIT && !hl_foreign_allocator() && hl_owns_malloc())
    hl_lazy_init();
  if (atomic_load(&hl_state) != HL_ON || atomic_exchange(&tried, 1)) return;
  // With no library's handle: a handler registered with this library's runs in its destructor
  hl_cxa_atexit_fn next = next_cxa_atexit();
  if (next && next(hl_exit_handler, NULL, NULL) == 0) atomic_store(&hl_ends_after_destructors, 1);
}

int __cxa_atexit(void (*handler)(void *), void *arg, void *library) {
  register_exit_handler_first();
  hl_cxa_atexit_fn next = next_cxa_atexit();
  return next ? next(handler, arg, library) : -1;
}

int on_exit(void (*handler)(int, void *), void *arg) {
  register_exit_handler_first();
  hl_on_exit_fn next = (hl_on_exit_fn)hl_next_definition("on_exit");
  return next ? next(handler, arg) : -1;
}
#endif

__attribute__((constructor)) static void hl_constructor(void) {
  if (hl_foreign_allocator()) {  // a library's allocator comes before glibc's: see foreign.c
    atomic_store(&hl_state, HL_OFF);
    note_foreign_malloc(hl_foreign.name);
    return;
  }
  // Still uninitialized here means no malloc has reached this copy's hooks: see if another has.
  if (atomic_load(&hl_state) == HL_UNINIT && !hl_owns_malloc()) {
    atomic_store(&hl_state, HL_OFF);
    note_foreign_malloc("");
    return;
  }
  hl_lazy_init();
  pthread_atfork(NULL, NULL, hl_fork_child);
  if (atomic_load(&hl_state) != HL_ON) return;
  hl_tls.guard++;
  hl_swift_init();  // dlsym, so not before constructors run
#ifdef HL_PRELOAD
  register_exit_handler_first();
#endif
  hl_marks_install();
  hl_pressure_install();  // the warning signal, PSI, --warn-at and --memory-limit
  hl_sampler_start();
  hl_tls.guard--;
}

// Ends the recording when no exit handler will (a library linked into the program), or when
// the handler has run already.
__attribute__((destructor)) static void hl_destructor(void) {
  if (atomic_load(&hl_state) != HL_ON) return;
  if (atomic_load(&hl_ends_after_destructors) && !atomic_load(&hl_in_exit_handler)) return;
  finish_at_exit();
}

int heapline_start(const char *path, unsigned depth) {
  if (hl_foreign_allocator()) return ENOTSUP;  // see foreign.c
  if (atomic_load(&hl_state) == HL_UNINIT) hl_lazy_init();
  hl_spin_lock(&hl_control_lock);
  int err = atomic_load(&hl_state) == HL_OFF ? 0 : EBUSY;
  hl_tls.guard++;
  if (!err) err = hl_begin(path, depth, 1);
  if (!err) {
    hl_swift_init();
    hl_sampler_start();
  }
  hl_tls.guard--;
  hl_spin_unlock(&hl_control_lock);
  return err;
}

// A recording whose write failed has stopped recording already (STOPPING): stopping it finishes
// the stop, so that the next start can begin, and returns the write's errno.
int heapline_stop(void) {
  hl_spin_lock(&hl_control_lock);
  int state = atomic_load(&hl_state);
  int failed = state == HL_STOPPING ? hl_writer_failed() : 0;
  int err = state == HL_ON || failed ? 0 : EINVAL;
  if (!err) {
    hl_tls.guard++;
    hl_end(HL_END_API);
    hl_tls.guard--;
    err = failed ? failed : hl_writer_failed();
  }
  hl_spin_unlock(&hl_control_lock);
  return err;
}

// Before the program installs a seccomp filter that would kill it for the shim's own calls
// (seccomp.c): the trace ends there, whole, and says why.
void hl_end_for_seccomp(void) {
  hl_spin_lock(&hl_control_lock);
  if (atomic_load(&hl_state) == HL_ON) {
    hl_tls.guard++;
    hl_log("the program installs a seccomp filter that forbids the shim's system calls: ",
           "recording ended");
    hl_end(HL_END_SECCOMP);
    hl_tls.guard--;
  }
  hl_spin_unlock(&hl_control_lock);
}

int heapline_is_recording(void) { return atomic_load(&hl_state) == HL_ON; }

void heapline_flush(void) {
  if (atomic_load(&hl_state) != HL_ON) return;
  hl_tls.guard++;
  hl_flush_all(0);
  hl_tls.guard--;
}

uint32_t heapline_scope_push(const char *name) {
  uint32_t previous = hl_tls.scope;
  size_t len = name ? strlen(name) : 0;
  if (len) {
    hl_enter();
    hl_tls.scope = hl_category_register(NULL, HL_CAT_SCOPE, name, len);
    hl_leave();
  }
  return previous;
}

// A token that no push returned (a stray number) is ignored: blocks were counted under a
// category of that number and no name, of a kind no reader knew.
void heapline_scope_pop(uint32_t token) {
  if (!token || hl_category_is_scope(token)) hl_tls.scope = token;
}

// Zero once nothing records: the live table keeps the last recording's blocks until the next
// one begins, and a program asked it after Heapline.record returned was told they were live.
uint64_t heapline_scope_live_bytes(const char *name, uint64_t *blocks) {
  uint32_t id = name && atomic_load(&hl_state) == HL_ON ? hl_category_find(name) : 0;
  if (!id) {
    if (blocks) *blocks = 0;
    return 0;
  }
  hl_tls.guard++;
  uint64_t bytes = hl_live_bytes_in(id, blocks);
  hl_tls.guard--;
  return bytes;
}

uint64_t heapline_live_table_bytes(uint64_t *blocks) {
  uint64_t bytes, held;
  hl_live_memory(&bytes, &held);
  if (blocks) *blocks = held;
  return bytes;
}

// Before the traced process execs (exec.c): finishes the trace and moves it aside as PATH.N,
// the first N free. Returns 1 when it did.
int hl_end_for_exec(void) {
  if (atomic_load(&hl_state) != HL_ON || !hl_trace_path[0]) return 0;
  hl_spin_lock(&hl_control_lock);
  int on = atomic_load(&hl_state) == HL_ON;
  if (on) hl_end(HL_END_EXEC);
  hl_spin_unlock(&hl_control_lock);
  if (!on) return 0;
  if (atomic_load(&hl_shared->state) == HL_SHARED_FINISHED)
    atomic_store(&hl_shared->state, HL_SHARED_EXECED);
  // Rotated files have names of their own: the next program's numbering goes on after them.
  if (hl_rotate_current()) return 1;
  char aside[sizeof hl_trace_path + 16];
  for (uint32_t n = hl_shared->exec_last + 1; n < 1000000; n++) {
    snprintf(aside, sizeof aside, "%s.%u", hl_trace_path, n);
    if (renameat2(AT_FDCWD, hl_trace_path, AT_FDCWD, aside, RENAME_NOREPLACE) == 0) {
      if (!hl_shared->execs++) hl_shared->exec_first = n;
      hl_shared->exec_last = n;
      break;
    }
    if (errno != EEXIST) break;
  }
  return 1;
}

// The exec failed: the program goes on, and so does its recording, in a new trace at the path.
void hl_restart_after_exec(void) {
  hl_tls.guard++;
  hl_spin_lock(&hl_control_lock);
  int err = atomic_load(&hl_state) == HL_OFF ? hl_begin(hl_trace_path, hl_env_depth, 0) : EBUSY;
  hl_spin_unlock(&hl_control_lock);
  if (!err) hl_sampler_start();
  hl_tls.guard--;
}
