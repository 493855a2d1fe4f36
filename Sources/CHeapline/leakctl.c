// When leak scans run, and how one runs. A scan takes the registered-roots lock, every
// live-table shard's lock and the stack table's lock before it stops the world: a stopped thread
// may hold malloc's or the loader's lock, but never one of these, so the scan never waits for a
// stopped thread. It
// reads module segments (dl_iterate_phdr) before it takes them, and afterwards checks that no
// dlopen or dlclose ran meanwhile (dl.c counts them); when one did, it scans again. It asked
// the loader once, holding the live table: a thread inside dlclose, which holds the loader's
// lock while it frees the module's pieces, waited in free for the live table, and the scan
// for the loader, for ever (a tester's program that reloads a plugin, scanned every 10 ms:
// 3 to 10 % of runs). Results are written once the world runs again, into the scanning thread's
// buffer, before the live table's locks are let go.
//
// With HEAPLINE_LEAKS_GRAPH=1 (record --graph), each scan also keeps its reachability graph
// (scangraph.c) and writes it after its leak records.
//
// Scans run at exit (HEAPLINE_LEAKS_AT_EXIT=1, from the preload library's destructor), on a signal (HEAPLINE_LEAKS_SIGNAL, handled on
// the shim's thread), every HEAPLINE_LEAKS_EVERY_MS milliseconds (on the shim's thread), and
// from heapline_check_leaks().
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "heapline.h"
#include "leakscan.h"
#include "tasks.h"

enum { HL_TRIGGER_EXIT = 1, HL_TRIGGER_SIGNAL = 2, HL_TRIGGER_TIMER = 3, HL_TRIGGER_API = 4 };
enum { HL_SCAN_UNTRACKED = 1, HL_SCAN_UNRESPONSIVE = 2, HL_SCAN_MODULES_CHANGED = 4 };

void hl_lazy_init(void);
void hl_finish_pending_for_flush(struct hl_buffer *b);
extern struct hl_buffer *hl_sampler_buffer;
_Atomic int32_t hl_sampler_tid;
static _Atomic int hl_scan_lock;
static uint32_t hl_scan_id, hl_scan_epoch;
static int hl_preloaded;  // recording since the process started: the live table has it all
static uint32_t hl_preload_epoch;  // that recording's
static _Atomic int hl_signal_pending;
static int hl_scan_at_exit;
static _Atomic int hl_exiting;  // no more timer or signal scans: libraries are being torn down
static uint64_t hl_every_ns, hl_next_ns;
static int hl_keep_graph;  // HEAPLINE_LEAKS_GRAPH: record --graph

struct hl_result {
  struct hl_leak_scan_info info;
  uint64_t lost_blocks, lost_bytes, possible_blocks, possible_bytes;
  struct hl_graph_result graph;  // with --graph
  uint64_t rss_time, rss;        // the process's RSS at the scan's end, its memory still held
};

static int32_t gettid_raw(void) { return (int32_t)syscall(SYS_gettid); }

static inline int reported(uint8_t state) { return state == HL_UNSEEN || state == HL_POSSIBLE; }

// The scan's findings, written into `b` (or only counted, without one) straight from the scan
// and the live table, whose locks keep every block from being freed: nothing is copied, so a
// program that exits with millions of lost blocks costs the scan no more than its index. Edges
// name blocks by their place among the findings: a count every 64 blocks, and a count of the
// few between, gives it.
static void put_findings(struct hl_scan *s, struct hl_buffer *b, struct hl_result *r) {
  uint32_t n = s->ix.count, count = 0;
  size_t prefix_bytes = ((size_t)n / 64 + 1) * sizeof(uint32_t);
  uint32_t *prefix = hl_map(prefix_bytes);
  for (uint32_t j = 0; j < n; j++) {
    if (prefix && j % 64 == 0) prefix[j / 64] = count;
    count += reported(s->state[j]);
  }
  size_t edges = prefix ? s->edge_count : 0;  // out of memory: the findings without their edges
  if (b) hl_emit_leak_scan(b, &r->info, count, edges);
  for (uint32_t j = 0; j < n; j++) {
    if (!reported(s->state[j])) continue;
    int lost = s->state[j] == HL_UNSEEN;
    struct hl_block blk;
    hl_live_block_at(s->ix.blocks[j].ref, &blk);
    *(lost ? &r->lost_blocks : &r->possible_blocks) += 1;
    *(lost ? &r->lost_bytes : &r->possible_bytes) += blk.size;
    if (!b) continue;
    struct hl_leak_block k = {.addr = blk.addr, .size = blk.size, .counter = blk.counter,
                              .serial = blk.serial, .stack = blk.stack,
                              .category = blk.category, .kind = lost ? 1 : 2};
    hl_leak_block_words(&k);
    if (k.words[0])  // a class not named yet
      k.category = hl_swift_classify_in(b, k.size, k.words);
    hl_emit_leak_block(b, r->info.id, &k);
  }
  struct hl_edge edge = {0, 0, 0};
  for (size_t e = 0, at = 0; b && e < edges; e++) {
    hl_scan_edge_next(s, &at, &edge);
    uint32_t ends[2] = {edge.from, edge.to};
    for (int side = 0; side < 2; side++) {
      uint32_t j = ends[side], rank = prefix[j / 64];
      for (uint32_t i = j & ~63u; i < j; i++) rank += reported(s->state[i]);
      ends[side] = rank;
    }
    hl_emit_leak_edge(b, r->info.id, ends[0], ends[1], edge.flags);
  }
  hl_unmap(prefix, prefix_bytes);
}

// One scan; with `b`, its findings are written, unless a module came or went meanwhile and
// `last_try` is not set: then *modules_changed says to scan again.
static int scan_once(struct hl_result *r, struct hl_buffer *b, int last_try, uint64_t started,
                     const uint64_t *regs, size_t nregs, uintptr_t sp, uintptr_t own_sp,
                     int *modules_changed) {
  uint64_t ended = atomic_load(&hl_dl_ended), begun = atomic_load(&hl_dl_begun);
  struct hl_modules *modules = hl_modules_snapshot();
  hl_roots_lock();
  hl_live_lock_all();
  hl_stacks_lock();
  struct hl_scan s;
  int err = hl_scan_begin(&s);
  if (!err && hl_keep_graph && hl_graph_begin(&s)) hl_graph_end(&s);  // the scan, graphless
  struct hl_world w;
  uint64_t stopped_at = hl_monotonic_ns();
  if (!err) err = hl_world_stop(&w, gettid_raw(), own_sp);
  if (!err) {
    r->info.time = hl_now();
    hl_maps_read(&s.maps);
    hl_scan_skip_unmapped(&s);
    // Since the process started, only the shim's own thread allocates untracked, and only to
    // name Swift types: otherwise every chunk is in the live table, and the heap needs no walk.
    int whole = hl_preloaded && atomic_load(&hl_epoch) == hl_preload_epoch;
    int untracked = !whole || hl_swift_present;
    int program_thread = gettid_raw() != atomic_load(&hl_sampler_tid);
    hl_roots_scan(&s, modules, &w, regs, nregs, sp, program_thread, untracked);
    hl_scan_finish(&s);
    hl_world_resume(&w);
    r->info.stop_ns = hl_monotonic_ns() - stopped_at;
    // A call under way when the scan began, or begun since, may have changed the modules
    *modules_changed = begun != ended || atomic_load(&hl_dl_begun) != begun;
    r->info.flags = (untracked ? HL_SCAN_UNTRACKED : 0) |
                    (w.unresponsive ? HL_SCAN_UNRESPONSIVE : 0) |
                    (*modules_changed ? HL_SCAN_MODULES_CHANGED : 0);
    r->info.threads_stopped = w.stopped;
    r->info.threads_unresponsive = w.unresponsive;
    r->info.live_blocks = s.ix.count;
    r->info.live_bytes = s.ix.live_bytes;
    r->info.root_bytes = s.root_bytes;
    r->info.total_ns = hl_monotonic_ns() - started;
    // With the world running again, the live table's locks, still held, keep every block from
    // being freed (a free waits for them before the real free): the findings and the graph are
    // read now, and the buffer's chunks can be written (a stopped thread may have held the file).
    if (!*modules_changed || last_try) {
      put_findings(&s, b, r);
      if (s.graph && hl_graph_collect(&s, &r->graph)) hl_graph_release(&r->graph);
      // The process's RSS with the scan's memory still held: at exit, the sampler's samples
      // may all come before it, and a report's peak would miss what the scan cost.
      r->rss_time = hl_now();
      r->rss = hl_read_rss();
    }
  }
  hl_stacks_unlock();
  hl_live_unlock_all();
  hl_roots_unlock();
  hl_scan_end(&s);
  hl_modules_release(modules);
  return err;
}

static void release(struct hl_result *r) {
  hl_graph_release(&r->graph);
  memset(r, 0, sizeof *r);
}

// A rotation (rotate.c) holds the scan lock: a scan would stop its thread in the middle of one.
int hl_leaks_try_hold(void) {
  int expected = 0;
  return atomic_compare_exchange_strong(&hl_scan_lock, &expected, 1);
}
void hl_leaks_release(void) { hl_spin_unlock(&hl_scan_lock); }

// Runs a scan and writes it to the trace. `sp` and `regs` are the scanning thread's own stack
// and registers when they are roots; 0 on the shim's thread, and at exit once main returned.
// The scan runs on a stack of the shim's own (mapped, so never a root), not on the thread that
// asked for it. A program's thread may run on a stack that malloc gave (a coroutine's, a
// signal stack), a block that roots reach and that is scanned whole: the scan's own frames
// there, full of copies of the blocks it has just indexed, would keep lost blocks reachable.
enum { HL_SCAN_STACK_BYTES = 1 << 20 };
static void *hl_scan_stack;  // under hl_scan_lock

struct scan_call {
  struct hl_result *r;
  struct hl_buffer *b;
  int last_try;
  uint64_t started;
  const uint64_t *regs;
  size_t nregs;
  uintptr_t sp, own_sp;
  int *changed, err;
};

static void scan_on_own_stack(void *context) {
  struct scan_call *c = context;
  c->err = scan_once(c->r, c->b, c->last_try, c->started, c->regs, c->nregs, c->sp, c->own_sp,
                     c->changed);
}

static int scan_once_aside(struct scan_call *c) {
  c->own_sp = (uintptr_t)__builtin_frame_address(0);  // the thread's own stack
  if (!hl_scan_stack) hl_scan_stack = hl_map(HL_SCAN_STACK_BYTES);
  if (hl_scan_stack)
    hl_on_stack(scan_on_own_stack, c, (char *)hl_scan_stack + HL_SCAN_STACK_BYTES);
  else
    scan_on_own_stack(c);
  return c->err;
}

// The seccomp filters of the calling thread, or -1 when /proc cannot tell: their number
// (Linux 5.9 on), or before that 1 for any. A filter that the program installed may kill it for
// a system call of the scan (seccomp.c): the scan does not run when one that the shim saw
// would, or when there is one it did not see. Filters the program was started under (a
// container's, which refuse with an error) leave the scan to its fallbacks, as before.
static int seccomp_filters(void) {
  char text[4096];
  if (hl_task_read((int32_t)getpid(), gettid_raw(), "status", text, sizeof text) <= 0) return -1;
  const char *line = strstr(text, "\nSeccomp_filters:");
  if (line) return atoi(line + 17);
  line = strstr(text, "\nSeccomp:");
  return line ? atoi(line + 9) == 2 : -1;
}
static int hl_filters_at_start = -1;

static int a_filter_forbids_the_scan(void) {
  if (hl_seccomp_kills_scan()) return 1;
  if (hl_filters_at_start < 0) return 0;
  return seccomp_filters() > hl_filters_at_start + hl_seccomp_filters_seen();
}

// Why a scan did not run, as `heapline leaks` also words it (LeakScanFailure.swift).
static const char *scan_failure(int err) {
  switch (err) {
  case EACCES:
    return "the program installed a seccomp filter that would kill it for a system call of the"
           " scan (or one the shim could not read)";
  case ETIMEDOUT: return "the program's threads could not be stopped in time";
  case EOVERFLOW: return "a block lies above 2^48, past what the scan can index";
  case EIO: return "the program's threads could not be listed (/proc/self/task)";
  case ENOMEM: return "no memory for the scan";
  default: return strerror(err);
  }
}

static int run_scan(int trigger, const uint64_t *regs, size_t nregs, uintptr_t sp,
                    struct heapline_leak_summary *summary) {
  if (atomic_load(&hl_state) != HL_ON) return EINVAL;
  hl_tls.guard++;  // nothing the scan calls may take a shard lock through the hooks
  hl_spin_lock(&hl_scan_lock);
  if (trigger != HL_TRIGGER_EXIT && atomic_load(&hl_exiting)) {
    hl_spin_unlock(&hl_scan_lock);
    hl_tls.guard--;
    return EINVAL;
  }
  int saved_errno = errno;  // the scan's probes (process_vm_readv) leave EFAULT
  uint64_t started = hl_monotonic_ns(), began = hl_now();
  hl_heapwalk_init();
  // The buffer is taken before the scan, which writes its findings while it holds the live
  // table, and let go after: letting go may free what signal handlers deferred.
  int mine = gettid_raw() == atomic_load(&hl_sampler_tid);  // the shim's own thread
  struct hl_buffer *b = mine ? hl_sampler_buffer : hl_acquire();
  if (atomic_load(&hl_epoch) != hl_scan_epoch) {  // a new recording numbers its scans anew
    hl_scan_epoch = atomic_load(&hl_epoch);
    hl_scan_id = 0;
  }
  struct hl_result r = {0};
  int err = a_filter_forbids_the_scan() ? EACCES : 0, changed = 0;
  for (int attempt = 0; !err; attempt++) {
    memset(&r, 0, sizeof r);
    r.info.id = hl_scan_id + 1;
    r.info.trigger = (uint32_t)trigger;
    struct scan_call c = {&r, b, attempt == 2, started, regs, nregs, sp, 0, &changed, 0};
    err = scan_once_aside(&c);
    if (err || !changed || attempt == 2) break;
    release(&r);  // a module was loaded or unloaded meanwhile: its segments may be missing
  }
  if (err) {
    hl_log("leak scan could not run: ", scan_failure(err));
    if (b) {  // and the trace says so, for `heapline leaks` to tell
      hl_emit_leak_failed(b, began, trigger, err);
      hl_buffer_flush(b);
    }
  }
  if (b && !err) {
    hl_scan_id = r.info.id;
    for (uint32_t i = 0; i < r.graph.node_count; i++) {  // classes not named yet
      struct hl_leak_block *k = &r.graph.nodes[i].block;
      if (k->words[0]) k->category = hl_swift_classify_in(b, k->size, k->words);
    }
    if (r.graph.nodes) hl_emit_leak_graph(b, r.info.id, &r.graph);
    hl_buffer_flush(b);  // the scan's chunk holds its untimed records only
    if (r.rss) {
      // An allocation still waiting for its class name goes first: it is older, and a
      // thread's records never go back in time.
      hl_finish_pending_for_flush(b);
      hl_emit_rss(b, r.rss_time, r.rss, 0);
    }
  }
  if (b && !mine) hl_release(b);
  if (summary && !err)
    *summary = (struct heapline_leak_summary){b ? r.info.id : 0, r.lost_blocks, r.lost_bytes,
                                              r.possible_blocks, r.possible_bytes};
  release(&r);
  hl_spin_unlock(&hl_scan_lock);
  hl_tls.guard--;
  errno = saved_errno;
  return err;
}

// The caller's callee-saved registers may hold its only pointer to a block: save them in an
// array on this frame, and scan the stack from that array up.
#define HL_SAVE_REGISTERS(regs)                                                              \
  __asm__ volatile("mov %%rbx, 0(%0)\n\tmov %%rbp, 8(%0)\n\tmov %%r12, 16(%0)\n\t"           \
                   "mov %%r13, 24(%0)\n\tmov %%r14, 32(%0)\n\tmov %%r15, 40(%0)"             \
                   : : "r"(regs) : "memory")

__attribute__((noinline)) int heapline_check_leaks(struct heapline_leak_summary *summary) {
  uint64_t regs[6];
  HL_SAVE_REGISTERS(regs);
  return run_scan(HL_TRIGGER_API, regs, 6, (uintptr_t)regs, summary);
}

// The exit handler that ends the recording calls this (control.c), after the destructors of the
// program and of every library: so the scan sees the program as valgrind does, and its stack
// from here up: exit's frames, not main's, which has returned.
//
// The exiting thread's stack is a root only from the frame that called exit() up, with that
// frame's registers (exitframes.c): below it lie exit's frames and the destructors', their unused
// slots full of stale copies of pointers. When main returned, none of it is: its locals are dead.
__attribute__((noinline)) void hl_leaks_at_exit(void) {
  atomic_store(&hl_exiting, 1);
  if (!hl_scan_at_exit) return;
  uint64_t regs[6];
  hl_tls.guard++;  // what libunwind allocates is the shim's
  uintptr_t sp = hl_exit_caller_frames(regs);
  hl_tls.guard--;
  run_scan(HL_TRIGGER_EXIT, sp ? regs : NULL, sp ? 6 : 0, sp, NULL);
}

static void on_leak_signal(int sig) {
  (void)sig;
  atomic_store(&hl_signal_pending, 1);  // the shim's thread scans: a handler may not
  hl_sampler_wake();
}

uintptr_t hl_sampler_frame, hl_sampler_tp;

void hl_leaks_sampler_started(void) {
  hl_sampler_frame = (uintptr_t)__builtin_frame_address(0);
  __asm__ volatile("mov %%fs:0, %0" : "=r"(hl_sampler_tp));
  atomic_store(&hl_sampler_tid, gettid_raw());
}

uint64_t hl_leaks_due(void) { return hl_every_ns ? hl_next_ns : UINT64_MAX; }

void hl_leaks_poll(uint64_t now) {
  if (atomic_exchange(&hl_signal_pending, 0)) run_scan(HL_TRIGGER_SIGNAL, NULL, 0, 0, NULL);
  if (now >= hl_leaks_due()) {
    run_scan(HL_TRIGGER_TIMER, NULL, 0, 0, NULL);
    hl_next_ns = hl_now() + hl_every_ns;
  }
}

// From the environment that `heapline record` sets, when it preloaded the shim.
__attribute__((constructor)) static void hl_leaks_constructor(void) {
  if (atomic_load(&hl_state) == HL_UNINIT) hl_lazy_init();
  if (atomic_load(&hl_state) != HL_ON) return;
  hl_tls.guard++;
  hl_preloaded = 1;
  hl_preload_epoch = atomic_load(&hl_epoch);
  hl_heapwalk_init();
  hl_roots_init();
  hl_exit_frames_init();
  const char *exit_scan = hl_option("HEAPLINE_LEAKS_AT_EXIT");
  hl_scan_at_exit = exit_scan && atoi(exit_scan) > 0;
  const char *sig = hl_option("HEAPLINE_LEAKS_SIGNAL");
  hl_install_handler(sig ? atoi(sig) : 0, on_leak_signal);
  hl_every_ns = hl_env_ms_as_ns("HEAPLINE_LEAKS_EVERY_MS");
  hl_filters_at_start = seccomp_filters();
  const char *graph = hl_option("HEAPLINE_LEAKS_GRAPH");
  hl_keep_graph = graph && atoi(graph) > 0;
  hl_next_ns = hl_every_ns;
  hl_tls.guard--;
}
