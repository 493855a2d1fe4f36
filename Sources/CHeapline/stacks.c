// Backtraces and the stack table. Every distinct stack is stored once, as a trie of
// (parent, pc) nodes: a stack id is the node of its innermost frame. A thread remembers its
// previous stack, so a call from the same place costs one comparison per frame and no lookups.
#include <libunwind.h>
#include <string.h>

#include "unwind.h"

// The linker's bounds of the shim's own code; hidden, so that they are always this library's.
extern char __start_hl_text[] __attribute__((visibility("hidden")));
extern char __stop_hl_text[] __attribute__((visibility("hidden")));

struct hl_node {
  uintptr_t pc;
  uint32_t parent, id;
};

// The table's bound: 2^22 slots of 16 B, 64 MiB (and 8 MiB for their ids' slots), at most
// 2,097,152 distinct frames. Past it a new frame is not stored and its stack is cut short
// there; the trailer counts those frames. The last 65,536 nodes are kept for the frame that
// says so (HL_PC_LOST) under each frame where stacks were cut: without it, a cut stack was one
// with its outer frames, which took the allocations of every deeper one (a tester's program
// charged 75 % of its allocations to a line of main that calls no malloc).
enum { HL_STACK_SLOTS_MAX = 1 << 22, HL_LOST_NODES = 1 << 16 };
#define HL_PC_LOST ((uintptr_t)1)  // TraceFormat.md: the frames below were lost

static struct hl_node *hl_nodes;  // open addressing on (parent, pc); id 0 marks an empty slot
static size_t hl_capacity, hl_count;
// Each id's slot, for the leak scan's lookups by id (ids are at most half the capacity): it
// went through the whole table for every 64 of them, and the scans of a program whose stacks
// kept coming (swift-format) took from 4 ms to 45 ms over 8 s with the same blocks.
static uint32_t *hl_slot_of_id;
static inline size_t ids_bytes(size_t capacity) { return (capacity / 2 + 2) * sizeof(uint32_t); }
static uint64_t hl_frames_cut;
static _Atomic int hl_stack_lock;
static uint32_t hl_next_id = 1;

// Each distinct return address is numbered once (PC records), and nodes name it by number: a
// program's many thousand nodes share a few thousand addresses. Under the stack lock too.
struct hl_pc {
  uintptr_t pc;
  uint32_t index, pad;  // index 0 marks an empty slot
};
static struct hl_pc *hl_pcs;
static size_t hl_pc_capacity, hl_pc_count;
static uint32_t hl_next_pc = 1;

static size_t slot_of(uint32_t parent, uintptr_t pc, size_t mask) {
  uint64_t h = ((uint64_t)pc ^ ((uint64_t)parent << 40) ^ parent) * 0x9E3779B97F4A7C15ull;
  return (size_t)(h >> 20) & mask;
}

static int hl_grow(void) {
  size_t capacity = hl_capacity ? hl_capacity * 2 : 1 << 14;
  if (capacity > HL_STACK_SLOTS_MAX) return 0;
  struct hl_node *nodes = hl_map(capacity * sizeof *nodes);
  uint32_t *slots = nodes ? hl_map(ids_bytes(capacity)) : NULL;
  if (!slots) {
    if (nodes) hl_unmap(nodes, capacity * sizeof *nodes);
    return 0;
  }
  for (size_t i = 0; i < hl_capacity; i++) {
    struct hl_node n = hl_nodes[i];
    if (!n.id) continue;
    size_t s = slot_of(n.parent, n.pc, capacity - 1);
    while (nodes[s].id) s = (s + 1) & (capacity - 1);
    nodes[s] = n;
    slots[n.id] = (uint32_t)s;
  }
  hl_unmap(hl_nodes, hl_capacity * sizeof *hl_nodes);
  if (hl_slot_of_id) hl_unmap(hl_slot_of_id, ids_bytes(hl_capacity));
  hl_nodes = nodes;
  hl_slot_of_id = slots;
  __atomic_store_n(&hl_capacity, capacity, __ATOMIC_RELAXED);
  return 1;
}

static size_t pc_slot(uintptr_t pc, size_t mask) {
  return (size_t)(((uint64_t)pc * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

static int grow_pcs(void) {
  size_t capacity = hl_pc_capacity ? hl_pc_capacity * 2 : 1 << 12;
  if (capacity > HL_STACK_SLOTS_MAX) return 0;
  struct hl_pc *pcs = hl_map(capacity * sizeof *pcs);
  if (!pcs) return 0;
  for (size_t i = 0; i < hl_pc_capacity; i++) {
    if (!hl_pcs[i].index) continue;
    size_t s = pc_slot(hl_pcs[i].pc, capacity - 1);
    while (pcs[s].index) s = (s + 1) & (capacity - 1);
    pcs[s] = hl_pcs[i];
  }
  hl_unmap(hl_pcs, hl_pc_capacity * sizeof *hl_pcs);
  hl_pcs = pcs;
  __atomic_store_n(&hl_pc_capacity, capacity, __ATOMIC_RELAXED);
  return 1;
}

// With the lock held: the number of `pc`, made when it is new (`*fresh`); 0 when no room.
static uint32_t pc_index_locked(uintptr_t pc, int *fresh) {
  *fresh = 0;
  if ((hl_pc_count + 1) * 2 > hl_pc_capacity && !grow_pcs()) {
    if (!hl_pc_capacity) return 0;
  }
  size_t mask = hl_pc_capacity - 1, s = pc_slot(pc, mask);
  while (hl_pcs[s].index && hl_pcs[s].pc != pc) s = (s + 1) & mask;
  if (hl_pcs[s].index) return hl_pcs[s].index;
  if ((hl_pc_count + 1) * 2 > hl_pc_capacity) return 0;  // full, and could not grow
  hl_pcs[s] = (struct hl_pc){.pc = pc, .index = hl_next_pc++};
  hl_pc_count++;
  *fresh = 1;
  return hl_pcs[s].index;
}

void hl_stacks_init(void) {
  // libunwind's per-thread cache makes repeated unwinds through the same code cheap.
  // libunwind starts here, opening its pipe: parked (fds.c) because this counts as unwinding.
  hl_tls.unwinding = 1;
  unw_set_caching_policy(unw_local_addr_space, UNW_CACHE_PER_THREAD);
  hl_tls.unwinding = 0;
  hl_unwind_verify = hl_option_long("HEAPLINE_VERIFY_UNWIND", 0, 0, 1) == 1;
}

static uint32_t hl_intern(struct hl_buffer *b, uint32_t parent, uintptr_t pc, int *cut);

// A stack cut at `parent` for want of room for `pc`: it ends at the marker of lost frames under
// `parent`, when there is room for that.
static uint32_t cut_at(struct hl_buffer *b, uint32_t parent, uintptr_t pc, int *cut) {
  *cut = 1;
  if (pc == HL_PC_LOST) return parent;
  __atomic_store_n(&hl_frames_cut, hl_frames_cut + 1, __ATOMIC_RELAXED);
  int again = 0;
  return hl_intern(b, parent, HL_PC_LOST, &again);
}

// With the lock held and a table mapped: the slot of the node for `pc` under `parent`, or the
// empty slot where it would go.
static size_t slot_locked(uint32_t parent, uintptr_t pc) {
  size_t mask = hl_capacity - 1, s = slot_of(parent, pc, mask);
  while (hl_nodes[s].id && (hl_nodes[s].pc != pc || hl_nodes[s].parent != parent))
    s = (s + 1) & mask;
  return s;
}

// The node for `pc` under `parent`, made (and written to the trace) when it is new. When there
// is no room, `*cut` is set and the node returned is the marker under `parent`, or `parent`.
HL_HOOK static uint32_t hl_intern(struct hl_buffer *b, uint32_t parent, uintptr_t pc, int *cut) {
  struct hl_node_cache *cached = &b->nodes[slot_of(parent, pc, HL_NODE_CACHE - 1)];
  if (cached->id && cached->pc == pc && cached->parent == parent) return cached->id;
  hl_spin_lock(&hl_stack_lock);
  // Looked up first: a full table still has every node it holds (it cut stored stacks too).
  size_t s = hl_capacity ? slot_locked(parent, pc) : 0;
  uint32_t id = hl_capacity ? hl_nodes[s].id : 0, pc_index = 0;
  int fresh = id == 0, fresh_pc = 0;
  if (fresh) {
    size_t capacity = hl_capacity;
    if (((hl_count + 1) * 2 > hl_capacity && !hl_grow()) ||
        (pc != HL_PC_LOST && hl_count + 1 > HL_STACK_SLOTS_MAX / 2 - HL_LOST_NODES)) {
      hl_spin_unlock(&hl_stack_lock);
      // The table is full or out of memory: the stack is cut here, and says so when it can
      return cut_at(b, parent, pc, cut);
    }
    if (hl_capacity != capacity) s = slot_locked(parent, pc);  // grown: slots moved
    pc_index = pc_index_locked(pc, &fresh_pc);
    if (!pc_index) {
      hl_spin_unlock(&hl_stack_lock);
      return cut_at(b, parent, pc, cut);
    }
    id = hl_next_id++;
    hl_nodes[s] = (struct hl_node){.pc = pc, .parent = parent, .id = id};
    hl_slot_of_id[id] = (uint32_t)s;
    hl_count++;
  }
  hl_spin_unlock(&hl_stack_lock);
  // Written by the thread that made the node, so it may land after a use of the id from
  // another thread; readers resolve stacks once the whole trace is read.
  if (fresh_pc) hl_emit_pc(b, pc_index, pc);
  if (fresh) hl_emit_stack(b, id, parent, pc_index);
  *cached = (struct hl_node_cache){.pc = pc, .parent = parent, .id = id};
  return id;
}

static inline int hl_in_shim(void *pc) {
  return (char *)pc >= __start_hl_text && (char *)pc < __stop_hl_text;
}

// The stack id of `frames` (innermost first), matched against the thread's previous stack from
// the outermost frame in: the part they share has its ids already. `known` is how many of the
// outermost frames are the previous stack's last ones when the unwinder knows it (it found them
// in place), else -1, and they are compared here.
HL_HOOK static uint32_t hl_intern_frames(struct hl_buffer *b, void **frames, int depth,
                                         int known) {
  uint32_t old = b->cache_depth;
  int shared = known;
  if (shared < 0) {
    shared = 0;
    while (shared < depth && shared < (int)old &&
           frames[depth - 1 - shared] == b->cache_pcs[old - 1 - shared])
      shared++;
  }
  if (shared == depth && depth == (int)old) return depth ? b->cache_ids[0] : 0;
  // The shared outer frames move to their places in the new stack; then the others are made.
  if (depth != (int)old && shared) {
    memmove(b->cache_pcs + depth - shared, b->cache_pcs + old - shared, (size_t)shared * sizeof *frames);
    memmove(b->cache_ids + depth - shared, b->cache_ids + old - shared,
            (size_t)shared * sizeof *b->cache_ids);
  }
  uint32_t parent = shared ? b->cache_ids[depth - shared] : 0;
  int cut_at_frame = -1;
  for (int i = depth - shared - 1; i >= 0; i--) {
    int cut = 0;
    parent = hl_intern(b, parent, (uintptr_t)frames[i], &cut);
    b->cache_ids[i] = parent;
    if (HL_UNLIKELY(cut)) {  // the frames inside it are lost with it, at its marker
      __atomic_store_n(&hl_frames_cut, hl_frames_cut + (uint64_t)i, __ATOMIC_RELAXED);
      cut_at_frame = i;
      while (i-- > 0) b->cache_ids[i] = parent;
      break;
    }
  }
  memcpy(b->cache_pcs, frames, (size_t)(depth - shared) * sizeof *frames);
  if (HL_UNLIKELY(cut_at_frame >= 0)) {
    // The cut frame and those inside it match no frame of the next stack, which would resume
    // under the marker and cut there again (a marker under a marker): it resumes at the last
    // frame kept. The unwinder's own record of the previous stack is no longer ours to trust.
    for (int i = 0; i <= cut_at_frame; i++) b->cache_pcs[i] = NULL;
    b->cache_unwound = 0;
  }
  b->cache_depth = (uint32_t)depth;
  return depth ? b->cache_ids[0] : 0;
}

// The caller's frames from `pcs`, without the shim's own at the top; at most hl_depth.
static inline int hl_drop_shim(void **pcs, int n, int *skip) {
  *skip = 0;
  while (*skip < n && hl_in_shim(pcs[*skip])) (*skip)++;
  int depth = n - *skip;
  return depth > (int)hl_depth ? (int)hl_depth : depth;
}

int hl_unwind_verify;
static _Atomic uint64_t hl_verify_checked, hl_verify_differed, hl_verify_fallbacks;

// libunwind's step by step walk, for what the table cannot unwind and for the check. It gives
// what unw_backtrace gives, but unw_backtrace's frame cache keeps a pc's rules after its module
// is unloaded (unw_flush_cache does not reach it), so a module loaded at the same address would
// be unwound with the old one's rules; stepping forgets them when dl.c flushes the cache.
struct libunwind_call {
  struct hl_unwind_scratch *w;
  void **pcs;
  int max, n;
};

HL_HOOK static void libunwind_steps_aside(void *arg) {
  struct libunwind_call *c = arg;
  unw_getcontext(&c->w->context);
  if (unw_init_local(&c->w->cursor, &c->w->context) != 0) return;
  while (c->n < c->max && unw_step(&c->w->cursor) > 0) {
    unw_word_t ip;
    if (unw_get_reg(&c->w->cursor, UNW_REG_IP, &ip) < 0 || ip < 0x4000) break;
    c->pcs[c->n++] = (void *)ip;
  }
}

// On a stack of the shim's own, which the scratch holds; its frames there and on the way back
// to the caller's stack (hl_on_stack) are the shim's, dropped with the others.
HL_HOOK int hl_libunwind_steps(struct hl_unwind_scratch *w, void **pcs, int max) {
  struct libunwind_call c = {w, pcs, max, 0};
  int held = hl_cancel_hold();  // libunwind checks addresses by writing them to a pipe
  hl_tls.unwinding = 1;  // first: a signal handler meanwhile must not wait for the pipe's lock
  if (hl_unwind_pipe_intact()) hl_aside(libunwind_steps_aside, &c, w->stack_top);
  hl_tls.unwinding = 0;
  hl_cancel_release(held);
  return c.n;
}

// libunwind takes the stack into `pcs`; the table's (`fast`, `n` frames, -1 when it gave up) is
// counted as alike or not. Returns libunwind's depth, less the shim's frames (`skip`).
HL_HOOK static int hl_verified(struct hl_unwind_scratch *w, int n, int *skip) {
  void **fast = w->fast, **pcs = w->pcs;
  int ref_skip, ref = hl_libunwind_steps(w, pcs, (int)hl_depth + 8);
  int depth = hl_drop_shim(pcs, ref, &ref_skip);
  atomic_fetch_add_explicit(&hl_verify_checked, 1, memory_order_relaxed);
  if (n < 0) {
    atomic_fetch_add_explicit(&hl_verify_fallbacks, 1, memory_order_relaxed);
  } else {
    int fast_skip, fast_depth = hl_drop_shim(fast, n, &fast_skip);
    if (fast_depth != depth ||
        memcmp(fast + fast_skip, pcs + ref_skip, (size_t)depth * sizeof *pcs) != 0)
      atomic_fetch_add_explicit(&hl_verify_differed, 1, memory_order_relaxed);
  }
  *skip = ref_skip;
  return depth;
}

// Under HEAPLINE_VERIFY_UNWIND: the stack is found again or walked as it would be without the
// check, libunwind takes it too, and libunwind's answer is the one kept.
HL_HOOK static uint32_t capture_checked(struct hl_buffer *b, struct hl_unwind_scratch *w,
                                        const struct hl_entry *at) {
  uint32_t id;
  int skip, max = (int)hl_depth + 8;
  int remembered = at ? hl_unwind_memo_find(b, at, &id, w->fast) : -1;
  int n = remembered >= 0 ? remembered
          : at            ? hl_unwind_from(b, w->fast, max, at)
                          : hl_unwind_fast(b, w->fast, max);
  int depth = hl_verified(w, n, &skip);
  b->cache_unwound = 0;
  id = hl_intern_frames(b, w->pcs + skip, depth, -1);
  if (at && n >= 0 && remembered < 0) hl_unwind_memo_keep(b, at, depth, id);
  return id;
}

// A stack from where the program called (`at`), found again whole when it can be. Otherwise
// the unwinder tells which outer frames it found in place, the previous stack's: their nodes
// are known, and only the frames it walked are looked up. That holds when the trie's previous
// stack is that same previous stack whole (not one that libunwind or a signal handler took, nor
// one cut at the depth limit, whose nodes hang from another outermost frame).
HL_HOOK uint32_t hl_capture_stack(struct hl_buffer *b, const struct hl_entry *at) {
  struct hl_unwind_scratch *w = hl_unwind_scratch(b);
  if (HL_UNLIKELY(!w)) return hl_intern_frames(b, NULL, 0, -1);  // no memory to take it in
  if (HL_UNLIKELY(hl_unwind_verify)) return capture_checked(b, w, at);
  uint32_t id;
  if (at && hl_unwind_memo_find(b, at, &id, NULL) >= 0) return id;
  void **pcs = w->pcs;
  int skip, known = -1, max = (int)hl_depth + 8;
  int n = at ? hl_unwind_from(b, pcs, max, at) : hl_unwind_fast(b, pcs, max);
  int unwound = n >= 0;
  if (HL_UNLIKELY(!unwound)) n = hl_libunwind_steps(w, pcs, max);
  int depth = hl_drop_shim(pcs, n, &skip);
  int whole = unwound && n - skip <= (int)hl_depth;
  if (whole && b->cache_unwound) {
    known = hl_unwind_reused(b);
    if (known > depth) known = depth;
    if (known > (int)b->cache_depth) known = -1;
  }
  b->cache_unwound = (uint32_t)whole;
  id = hl_intern_frames(b, pcs + skip, depth, known);
  if (at && unwound && skip == 0) hl_unwind_memo_keep(b, at, depth, id);
  return id;
}

// One line on stderr: how many stacks libunwind checked, how many the table had to leave to it,
// and how many the two unwinders saw differently.
void hl_unwind_report(void) {
  if (!hl_unwind_verify) return;
  char line[160];
  uint64_t figures[3] = {atomic_load(&hl_verify_checked), atomic_load(&hl_verify_fallbacks),
                         atomic_load(&hl_verify_differed)};
  const char *words[3] = {" stacks, ", " left to libunwind, ", " differed"};
  size_t at = 0;
  for (int i = 0; i < 3; i++) {
    char digits[24];
    int k = 0;
    uint64_t v = figures[i];
    do digits[k++] = (char)('0' + v % 10); while (v /= 10);
    while (k) line[at++] = digits[--k];
    size_t len = strlen(words[i]);
    memcpy(line + at, words[i], len);
    at += len;
  }
  line[at] = 0;
  hl_log("unwind check: ", line);
}

// A stack that a signal handler took (events.c): it runs through the signal frame and the
// interrupted event, whose frames in the shim are dropped wherever they stand.
HL_HOOK uint32_t hl_intern_pcs(struct hl_buffer *b, void *const *pcs, uint32_t n) {
  void *frames[HL_DEFERRED_DEPTH];
  int depth = 0;
  for (uint32_t i = 0; i < n && depth < (int)hl_depth && i < HL_DEFERRED_DEPTH; i++)
    if (!hl_in_shim(pcs[i])) frames[depth++] = pcs[i];
  b->cache_unwound = 0;
  return hl_intern_frames(b, frames, depth, -1);
}

// For a rotation (rotate.c): every node as a STACK record, so the new file resolves every id.
// The caller holds every buffer, so no thread is making nodes meanwhile.
void hl_stacks_emit_all(struct hl_buffer *b) {
  hl_spin_lock(&hl_stack_lock);
  for (size_t i = 0; i < hl_pc_capacity; i++)
    if (hl_pcs[i].index) hl_emit_pc(b, hl_pcs[i].index, hl_pcs[i].pc);
  for (size_t i = 0; i < hl_capacity; i++) {
    if (!hl_nodes[i].id) continue;
    int fresh;
    hl_emit_stack(b, hl_nodes[i].id, hl_nodes[i].parent, pc_index_locked(hl_nodes[i].pc, &fresh));
  }
  hl_spin_unlock(&hl_stack_lock);
}

void hl_stacks_reset(void) {
  hl_spin_lock(&hl_stack_lock);
  if (hl_nodes) memset(hl_nodes, 0, hl_capacity * sizeof *hl_nodes);
  if (hl_slot_of_id) memset(hl_slot_of_id, 0, ids_bytes(hl_capacity));
  if (hl_pcs) memset(hl_pcs, 0, hl_pc_capacity * sizeof *hl_pcs);
  hl_count = hl_pc_count = 0;
  hl_next_id = hl_next_pc = 1;
  __atomic_store_n(&hl_frames_cut, 0, __ATOMIC_RELAXED);
  hl_spin_unlock(&hl_stack_lock);
}

// What the trailer says of the table: the bytes it has mapped, and the frames it had no room for.
// Without the lock: the trailer may be written by a thread that stopped the one holding it.
void hl_stacks_memory(uint64_t *bytes, uint64_t *cut) {
  size_t capacity = __atomic_load_n(&hl_capacity, __ATOMIC_RELAXED);
  *bytes = capacity * sizeof *hl_nodes + (capacity ? ids_bytes(capacity) : 0) +
           __atomic_load_n(&hl_pc_capacity, __ATOMIC_RELAXED) * sizeof *hl_pcs;
  *cut = __atomic_load_n(&hl_frames_cut, __ATOMIC_RELAXED);
}

// For the leak scan, which holds the stack lock before it stops the world, so that no stopped
// thread holds it: the pc and parent of each stack id in `ids` (0 for an id not found).
void hl_stacks_lock(void) { hl_spin_lock(&hl_stack_lock); }
void hl_stacks_unlock(void) { hl_spin_unlock(&hl_stack_lock); }

void hl_stacks_lookup_locked(const uint32_t *ids, size_t n, uintptr_t *pcs, uint32_t *parents) {
  for (size_t k = 0; k < n; k++) {
    pcs[k] = 0, parents[k] = 0;
    if (!ids[k] || ids[k] >= hl_next_id || !hl_slot_of_id) continue;
    const struct hl_node *node = &hl_nodes[hl_slot_of_id[ids[k]]];
    if (node->id != ids[k]) continue;
    pcs[k] = node->pc;
    parents[k] = node->parent;
  }
}
