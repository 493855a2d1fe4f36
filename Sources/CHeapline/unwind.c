// The table-driven unwinder: steps from frame to frame with the rules ehframe.c compiles, cached
// per pc, and stops early where the thread's previous stack is unchanged.
//
// It runs inside malloc, in any thread: its memory is mapped (hl_map), it takes no lock, and it
// reads the stack only between the caller's stack pointer and the top of the thread's stack,
// found once per thread (stack_bounds). A stack pointer outside those bounds (a signal stack, a
// coroutine's) sends the stack to libunwind, and so does any frame without a rule.
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "leakscan.h"
#include "unwind.h"

// Rules cached per pc for every thread: a program's threads run the same code, and a table of
// each thread's own (4,096 entries scattered over 96 KiB) cost a program of a thousand threads
// tens of megabytes, each thread deriving the rules the others had. An entry is written by the
// first thread that needs its pc, under the entry's sequence number; a reader that meets a
// writer at work derives the rule for itself. A rule is true of its pc until the module is
// unloaded, which moves hl_rules_generation on.
enum { HL_RULES = 1 << 14 };
struct hl_rule_entry {
  _Atomic uint32_t seq;  // odd while it is written
  _Atomic uint32_t generation;
  _Atomic uintptr_t pc;
  _Atomic uint64_t offsets;  // the rule's cfa_offset, rbp_offset and rbx_offset
  _Atomic uint32_t flags;
};
static struct hl_rule_entry *_Atomic hl_rules;  // mapped by the first walk
// libunwind's stack (stacks.c): it takes about 4.5 KiB of stack to walk through a signal frame,
// which a handler on a SIGSTKSZ alternate stack does not have. The first page is a guard.
enum { HL_LIBUNWIND_STACK = 32 * 1024 };

// A stack taken before, whole, found again from where it starts (hl_unwind_memo_find): the
// words its walk read (return addresses first, then saved registers) with their values, and
// which of the entry's registers it took a frame's address from.
enum { HL_MEMO_SETS = 8, HL_MEMO_WAYS = 4, HL_MEMO_DEPTH = HL_DEFAULT_DEPTH, HL_MEMO_READS = 112,
       HL_RULE_KEPT = HL_RULE_CFA_RBP | HL_RULE_CFA_RBX | HL_RULE_RBP_SAVED | HL_RULE_RBX_SAVED |
                      HL_RULE_RBX_LOST };
struct hl_memo {
  uint32_t depth, id;  // depth 0: empty
  uint32_t uses, reads;  // HL_RULE_CFA_RBP, _CFA_RBX of the entry's registers; words to check
  uintptr_t slot0, pc0, rbp, rbx, top;  // top: the highest word read
  uintptr_t at[HL_MEMO_READS], value[HL_MEMO_READS];
};

struct hl_unwind_state {
  _Alignas(4096) char libunwind_stack[HL_LIBUNWIND_STACK];
  uint32_t generation;  // of hl_rules_generation when the memos were made
  uint32_t prev_depth;  // 0: no previous stack to reuse
  uint32_t prev_complete;  // it ended at the outermost frame, not at the depth limit
  uint32_t reused;  // frames at the end of the last walk that are the previous stack's last
  struct hl_memo memo[HL_MEMO_SETS][HL_MEMO_WAYS];
  uint8_t memo_next[HL_MEMO_SETS];  // the way a set's next stack replaces
  uintptr_t prev_pcs[HL_WALK_MAX];
  uintptr_t prev_slots[HL_WALK_MAX];  // where each return address was read
  struct hl_frame_regs prev_regs[HL_WALK_MAX];
  struct hl_unwind_scratch scratch;
};

static _Atomic uint32_t hl_rules_generation;

static __thread struct {
  uintptr_t lo, hi;  // the thread's stack; empty until found
  uint32_t looks;    // times they were looked for
} hl_stack __attribute__((tls_model("initial-exec")));

// libunwind keeps what it learned of a pc too, and would unwind a module loaded where another
// was unloaded with the old one's rules: its caches go as well.
void hl_unwind_forget_rules(void) {
  atomic_fetch_add(&hl_rules_generation, 1);
  unw_flush_cache(unw_local_addr_space, 0, 0);
}

// Where the thread's stack lies, when `sp` is on it: the mapping that holds it, asked of the
// kernel for that one address, or found in the whole of /proc's maps where it cannot say (and
// for the main thread), once a thread (and again when its stack pointer goes outside what was
// seen). A thread that
// glibc made has its descriptor at the top of its stack, which therefore ends there (the kernel
// may merge the mapping with what lies above); the main thread's stack is the [stack] mapping.
// pthread_getattr_np would tell a thread's stack without /proc, but it allocates while it holds
// the thread's lock: a thread whose first allocation was one of its own (every thread that
// Rust's standard library starts) waited for itself forever. A thread may run on another stack
// for a while (a coroutine's): each costs one more look, up to a bound, after which such stacks
// go to libunwind.
static int stack_bounds(uintptr_t sp) {
  if (HL_LIKELY(sp >= hl_stack.lo && sp < hl_stack.hi)) return 1;
  if (hl_stack.looks >= 64) return 0;
  hl_stack.looks++;
  uintptr_t tp, lo, hi;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
  if (hl_maps_query(sp, &lo, &hi) && tp > sp && tp < hi) {  // a thread that glibc made
    hl_stack.lo = lo, hl_stack.hi = tp;
    return 1;
  }
  struct hl_vec maps;
  int found = 0;
  if (hl_maps_read(&maps) == 0) {
    const struct hl_mapping *m = hl_maps_find(&maps, sp);
    if (m && (m->flags & HL_MAP_STACK)) hl_stack.lo = m->lo, hl_stack.hi = m->hi, found = 1;
    else if (m && tp > sp && tp < m->hi) hl_stack.lo = m->lo, hl_stack.hi = tp, found = 1;
  }
  hl_vec_free(&maps);
  return found;
}

static struct hl_unwind_state *state_of(struct hl_buffer *b) {
  struct hl_unwind_state *s = b->unwind;
  if (HL_UNLIKELY(!s)) {
    s = hl_map(sizeof *s);
    if (!s) return NULL;
    mprotect(s->libunwind_stack, 4096, PROT_NONE);
    s->scratch.stack_top = s->libunwind_stack + HL_LIBUNWIND_STACK;
    s->generation = atomic_load(&hl_rules_generation);
    b->unwind = s;
  }
  uint32_t generation = atomic_load_explicit(&hl_rules_generation, memory_order_acquire);
  if (HL_UNLIKELY(s->generation != generation)) {
    s->prev_depth = 0;
    memset(s->memo, 0, sizeof s->memo);
    s->generation = generation;
  }
  return s;
}

struct hl_unwind_scratch *hl_unwind_scratch(struct hl_buffer *b) {
  struct hl_unwind_state *s = state_of(b);
  return s ? &s->scratch : NULL;
}

struct hl_unwind_scratch *hl_unwind_scratch_made(struct hl_buffer *b) {
  struct hl_unwind_state *s = b->unwind;
  return s ? &s->scratch : NULL;
}

static struct hl_rule_entry *rules_table(void) {
  struct hl_rule_entry *t = atomic_load_explicit(&hl_rules, memory_order_acquire), *none = NULL;
  if (HL_LIKELY(t)) return t;
  if (!(t = hl_map(HL_RULES * sizeof *t))) return NULL;
  if (atomic_compare_exchange_strong(&hl_rules, &none, t)) return t;
  hl_unmap(t, HL_RULES * sizeof *t);
  return none;
}

// A rule not in the table is read from the module's CFI on the stack libunwind runs on: the
// loader's _dl_find_object and the CFI's reader took about 1,150 bytes of the program's stack,
// and a thread of 16 KiB that allocated from a new call site with less than that to spare
// crashed, where untraced it had room (the table's hits take under 400).
struct rule_call {
  uintptr_t pc;
  struct hl_unwind_rule *rule;
};

static void read_rule(void *context) {
  struct rule_call *c = context;
  hl_ehframe_rule(c->pc, c->rule);
}

static void read_rule_aside(struct hl_unwind_state *s, uintptr_t pc, struct hl_unwind_rule *rule) {
  struct rule_call c = {pc, rule};
  hl_aside(read_rule, &c, s->scratch.stack_top);
}

// The rule for the frame that returns to `pc`: the call is the instruction before it.
static inline void rule_for(struct hl_unwind_state *s, uintptr_t pc, struct hl_unwind_rule *rule) {
  uint32_t generation = s->generation;
  struct hl_rule_entry *t = rules_table();
  struct hl_rule_entry *e = t ? &t[((pc * 0x9E3779B97F4A7C15ull) >> 40) & (HL_RULES - 1)] : NULL;
  uint32_t seq = 1;
  if (HL_LIKELY(e)) {
    seq = atomic_load_explicit(&e->seq, memory_order_acquire);
    uintptr_t at = atomic_load_explicit(&e->pc, memory_order_relaxed);
    uint32_t made = atomic_load_explicit(&e->generation, memory_order_relaxed);
    uint64_t offsets = atomic_load_explicit(&e->offsets, memory_order_relaxed);
    uint32_t flags = atomic_load_explicit(&e->flags, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (HL_LIKELY(!(seq & 1) && at == pc && made == generation && (flags & HL_RULE_KNOWN) &&
                  atomic_load_explicit(&e->seq, memory_order_relaxed) == seq)) {
      *rule = (struct hl_unwind_rule){.cfa_offset = (int32_t)(uint32_t)offsets,
                                      .rbp_offset = (int16_t)(uint16_t)(offsets >> 32),
                                      .rbx_offset = (int16_t)(uint16_t)(offsets >> 48),
                                      .flags = (uint16_t)flags};
      return;
    }
  }
  read_rule_aside(s, pc - 1, rule);
  if (!e || (seq & 1) ||
      !atomic_compare_exchange_strong_explicit(&e->seq, &seq, seq + 1, memory_order_acq_rel,
                                               memory_order_relaxed))
    return;
  atomic_store_explicit(&e->pc, pc, memory_order_relaxed);
  atomic_store_explicit(&e->generation, generation, memory_order_relaxed);
  atomic_store_explicit(&e->offsets,
                        (uint64_t)(uint32_t)rule->cfa_offset |
                            (uint64_t)(uint16_t)rule->rbp_offset << 32 |
                            (uint64_t)(uint16_t)rule->rbx_offset << 48,
                        memory_order_relaxed);
  atomic_store_explicit(&e->flags, rule->flags, memory_order_relaxed);
  atomic_store_explicit(&e->seq, seq + 2, memory_order_release);
}

static inline int readable(uintptr_t at, uintptr_t lo, uintptr_t hi) {
  return at >= lo && at <= hi - 8 && !(at & 7);
}

// What a recorded walk of frames `from` to `to` - 1 took their places from, besides the return
// addresses it read: the registers it had at `from` (returned, as HL_RULE_CFA_RBP and _CFA_RBX)
// and the saved registers it read later, each given once to `saved` with the value it held (a
// 0 from `saved` stops the walk through them: -1). A walk from the same place with the same
// return addresses, the same registers and the same saved values walks alike. (Return
// addresses alone did not do: a frame that uses alloca can put the same frames at the same
// places under another caller, whose saved rbp differs while the old return addresses still
// lie untouched in its new area.) Saved registers that no frame's address came from are not
// among them: they hold the callers' loop counters and pointers, which change with every call.
// The last frame's rule made no frame of these, and is not looked at.
struct hl_reg_source {
  uintptr_t at, want;  // where the register's value was read (0: it is the one it had at `from`)
  int given;           // already given to `saved`, or to the result
};

static inline int source_used(struct hl_reg_source *r, uint32_t reg, uint32_t *uses,
                              int (*saved)(void *, uintptr_t, uintptr_t), void *arg) {
  if (r->given) return 1;
  r->given = 1;
  if (r->at) return saved(arg, r->at, r->want);
  *uses |= reg;
  return 1;
}

static inline int walk_sources(const uintptr_t *slots, const struct hl_frame_regs *regs,
                               uint32_t from, uint32_t to,
                               int (*saved)(void *, uintptr_t, uintptr_t), void *arg) {
  struct hl_reg_source bp = {0, 0, 0}, bx = {0, 0, 0};
  uint32_t uses = 0;
  for (uint32_t k = from; k + 1 < to; k++) {
    uint32_t f = regs[k].flags;
    if (((f & HL_RULE_CFA_RBP) && !source_used(&bp, HL_RULE_CFA_RBP, &uses, saved, arg)) ||
        ((f & HL_RULE_CFA_RBX) && !source_used(&bx, HL_RULE_CFA_RBX, &uses, saved, arg)))
      return -1;
    uintptr_t cfa = slots[k + 1] + 8;
    if (f & HL_RULE_RBP_SAVED) bp = (struct hl_reg_source){cfa + regs[k].rbp_at, regs[k + 1].rbp_in, 0};
    if (f & HL_RULE_RBX_SAVED) bx = (struct hl_reg_source){cfa + regs[k].rbx_at, regs[k + 1].rbx_in, 0};
  }
  return (int)uses;
}

static int still_holds(void *arg, uintptr_t at, uintptr_t want) {
  (void)arg;
  return *(const uintptr_t *)at == want;
}

// Whether frames `from` to `to` - 1 of a recorded walk would be walked alike from the same
// place now, with `rbp` and `rbx` in the registers (walk_sources).
static int walks_alike(const uintptr_t *slots, const uintptr_t *pcs,
                       const struct hl_frame_regs *regs, uint32_t from, uint32_t to,
                       uintptr_t rbp, uintptr_t rbx) {
  for (uint32_t k = from + 1; k < to; k++)
    if (*(const uintptr_t *)slots[k] != pcs[k]) return 0;
  int uses = walk_sources(slots, regs, from, to, still_holds, NULL);
  return uses >= 0 && (!(uses & HL_RULE_CFA_RBP) || rbp == regs[from].rbp_in) &&
         (!(uses & HL_RULE_CFA_RBX) || rbx == regs[from].rbx_in);
}

// How many frames of the previous stack lie beyond its frame `j`, when the walk from `j` would
// find them again (walks_alike); -1 otherwise. `have` frames are unwound already, up to and
// including the one that matched `j`. A previous stack cut at the depth limit reaches the limit
// again only when this one is at least as deep where they meet.
// A stack's slots rise strictly from its innermost frame out (the walk never steps to a CFA
// at or below the slot it left), and the words it read lie among them: so when the first and
// the last slot lie within the stack now, all of them do, and the check only compares.
static int reusable(const struct hl_unwind_state *s, uint32_t j, int have, uintptr_t lo,
                    uintptr_t hi, uintptr_t rbp, uintptr_t rbx) {
  if (!s->prev_complete && have <= (int)j) return -1;
  uint32_t depth = s->prev_depth;
  if (j + 1 >= depth) return 0;
  if (!readable(s->prev_slots[j + 1], lo, hi) || !readable(s->prev_slots[depth - 1], lo, hi))
    return -1;
  if (!walks_alike(s->prev_slots, s->prev_pcs, s->prev_regs, j, depth, rbp, rbx)) return -1;
  return (int)(depth - j - 1);
}

// Called through hl_unwind_fast (below), which passes the slot of its own return address and
// the caller's rbp as they were on entry.
HL_HOOK __attribute__((used, visibility("hidden"))) int hl_unwind_walk(
    struct hl_buffer *b, void **pcs, int max, uintptr_t slot, uintptr_t rbp, uintptr_t rbx) {
  struct hl_unwind_state *s = state_of(b);
  if (!s || !stack_bounds(slot)) return -1;
  s->reused = 0;
  uintptr_t lo = slot, hi = hl_stack.hi;
  uintptr_t *slots = s->scratch.slots;
  struct hl_frame_regs *regs = s->scratch.regs;
  if (max > HL_WALK_MAX) max = HL_WALK_MAX;
  uint32_t j = 0;  // the previous stack's first frame whose slot is not below this one's
  int n = 0, complete = 1, rbx_known = 1;
  int in_place = 0;  // frames from here on are the previous stack's, at the same places
  uintptr_t pc = *(const uintptr_t *)slot;
  while (n < max) {
    pcs[n] = (void *)pc;
    regs[n] = (struct hl_frame_regs){.rbp_in = rbp, .rbx_in = rbx};
    slots[n++] = slot;
    while (j < s->prev_depth && s->prev_slots[j] < slot) j++;
    if (j < s->prev_depth && s->prev_slots[j] == slot && s->prev_pcs[j] == pc) {
      int more = reusable(s, j, n, lo, hi, rbp, rbx);
      if (more >= 0) {
        complete = s->prev_complete && n + more <= max;
        if (n + more > max) more = max - n;
        if (j + 1 == (uint32_t)n) in_place = n;
        // The slots are copied even when in place, as they always were: writing them also
        // overwrites the dead stack below the program's frames, where stale heap pointers could
        // pass for live ones in a leak scan of a thread that later parks over them.
        memcpy(pcs + n, s->prev_pcs + j + 1, (size_t)more * sizeof *pcs);
        memcpy(slots + n, s->prev_slots + j + 1, (size_t)more * sizeof *slots);
        regs[n - 1].flags = s->prev_regs[j].flags;  // frame j's rule, with this walk's registers
        regs[n - 1].rbp_at = s->prev_regs[j].rbp_at;
        regs[n - 1].rbx_at = s->prev_regs[j].rbx_at;
        memcpy(regs + n, s->prev_regs + j + 1, (size_t)more * sizeof *regs);
        n += more;
        s->reused = (uint32_t)more;
        goto done;
      }
    }
    struct hl_unwind_rule rule;
    rule_for(s, pc, &rule);
    const struct hl_unwind_rule *r = &rule;
    if (!(r->flags & HL_RULE_OK)) return -1;
    if (r->flags & HL_RULE_LAST) goto done;
    struct hl_frame_regs *used = &regs[n - 1];
    used->flags = r->flags & HL_RULE_KEPT;
    used->rbp_at = r->rbp_offset;
    used->rbx_at = r->rbx_offset;
    uintptr_t base = slot + 8;
    if (r->flags & HL_RULE_CFA_RBP) base = rbp;
    if (r->flags & HL_RULE_CFA_RBX) {
      if (!rbx_known) return -1;
      base = rbx;
    }
    uintptr_t cfa = base + (intptr_t)r->cfa_offset;
    if (cfa <= slot || !readable(cfa - 8, lo, hi)) return -1;
    if (r->flags & HL_RULE_RBP_SAVED) {
      uintptr_t at = cfa + (intptr_t)r->rbp_offset;
      if (!readable(at, lo, hi)) return -1;
      rbp = *(const uintptr_t *)at;
    }
    if (r->flags & HL_RULE_RBX_SAVED) {
      uintptr_t at = cfa + (intptr_t)r->rbx_offset;
      if (readable(at, lo, hi)) {
        rbx = *(const uintptr_t *)at;
      } else {
        rbx_known = 0;
        used->flags = (used->flags & ~(uint32_t)HL_RULE_RBX_SAVED) | HL_RULE_RBX_LOST;
      }
    }
    if (r->flags & HL_RULE_RBX_LOST) rbx_known = 0;
    slot = cfa - 8;
    pc = *(const uintptr_t *)slot;
    if (pc < 0x4000) goto done;  // libunwind stops at such a return address too
  }
  complete = 0;
done:
  s->prev_depth = (uint32_t)n;
  s->prev_complete = (uint32_t)complete;
  // A stack of the same depth where it met the previous one (a loop's next call) has the rest
  // of it in place already: only the frames walked are copied.
  int changed = in_place ? in_place : n;
  for (int k = 0; k < changed; k++) s->prev_pcs[k] = (uintptr_t)pcs[k];
  memcpy(s->prev_slots, slots, (size_t)changed * sizeof *slots);
  memcpy(s->prev_regs, regs, (size_t)changed * sizeof *regs);
  return n;
}

// The stacks a program allocates from in a loop take turns (a Swift churn's three classes, the
// dozen places an interpreter's loop allocates from), so the previous stack alone is seldom the
// next one. A thread keeps the last few whole, by where they start (the entry's stack pointer
// and return address): found there again, with every word its walk read unchanged and the
// entry's rbp and rbx as they were where the walk took a frame's address from them, the walk
// would find it again (the rule the walk follows where it meets the previous stack), and its id
// is known without a walk or a lookup.
static inline uint32_t memo_set(uintptr_t slot, uintptr_t pc) {
  return (uint32_t)(((slot ^ pc) * 0x9E3779B97F4A7C15ull) >> 61);
}

// Stacks from one call of malloc take turns (a Swift class's allocation always comes from
// swift_slowAlloc at the same depth), so a set holds several, each looked at until its first
// word that differs.
HL_HOOK int hl_unwind_memo_find(struct hl_buffer *b, const struct hl_entry *at, uint32_t *id,
                                void **pcs) {
  struct hl_unwind_state *s = state_of(b);
  if (!s || !stack_bounds(at->sp)) return -1;
  uintptr_t pc = *(const uintptr_t *)at->sp;
  const struct hl_memo *set = s->memo[memo_set(at->sp, pc)];
  for (int way = 0; way < HL_MEMO_WAYS; way++) {
    const struct hl_memo *m = &set[way];
    uint32_t k = 0;
    if (!m->depth || m->slot0 != at->sp || m->pc0 != pc || m->top > hl_stack.hi - 8 ||
        ((m->uses & HL_RULE_CFA_RBP) && m->rbp != at->rbp) ||
        ((m->uses & HL_RULE_CFA_RBX) && m->rbx != at->rbx))
      continue;
    while (k < m->reads && *(const uintptr_t *)m->at[k] == m->value[k]) k++;
    if (k < m->reads) continue;
    if (pcs) {  // the return addresses are the first words read
      pcs[0] = (void *)m->pc0;
      for (k = 1; k < m->depth; k++) pcs[k] = (void *)m->value[k - 1];
    }
    *id = m->id;
    return (int)m->depth;
  }
  return -1;
}

static int memo_read(struct hl_memo *m, uintptr_t at, uintptr_t value) {
  if (m->reads == HL_MEMO_READS) return 0;
  m->at[m->reads] = at;
  m->value[m->reads++] = value;
  if (at > m->top) m->top = at;
  return 1;
}

static int memo_saved(void *m, uintptr_t at, uintptr_t value) { return memo_read(m, at, value); }

// After a walk from `at` whose first `depth` frames made stack `id`: the words that walk read
// to find them, as walks_alike would check them from frame 0.
HL_HOOK void hl_unwind_memo_keep(struct hl_buffer *b, const struct hl_entry *at, int depth,
                                 uint32_t id) {
  struct hl_unwind_state *s = b->unwind;
  if (!s || depth <= 0 || depth > HL_MEMO_DEPTH || s->prev_depth < (uint32_t)depth ||
      s->prev_slots[0] != at->sp)
    return;
  uint32_t set = memo_set(at->sp, s->prev_pcs[0]);
  struct hl_memo *m = &s->memo[set][s->memo_next[set]++ % HL_MEMO_WAYS];
  *m = (struct hl_memo){.id = id, .slot0 = at->sp, .pc0 = s->prev_pcs[0], .rbp = at->rbp,
                        .rbx = at->rbx, .top = at->sp};
  int ok = 1;
  for (int k = 1; k < depth && ok; k++) ok = memo_read(m, s->prev_slots[k], s->prev_pcs[k]);
  int uses = ok ? walk_sources(s->prev_slots, s->prev_regs, 0, (uint32_t)depth, memo_saved, m) : -1;
  m->uses = uses >= 0 ? (uint32_t)uses : 0;
  m->depth = uses >= 0 ? (uint32_t)depth : 0;  // a stack that read too much is not kept
}

// A new recording numbers its stacks anew.
void hl_unwind_forget_stacks(struct hl_buffer *b) {
  struct hl_unwind_state *s = b->unwind;
  if (s) memset(s->memo, 0, sizeof s->memo);
}

HL_HOOK int hl_unwind_from(struct hl_buffer *b, void **pcs, int max, const struct hl_entry *at) {
  return hl_unwind_walk(b, pcs, max, at->sp, at->rbp, at->rbx);
}

// How many frames at the end of the last stack hl_unwind_fast gave are the previous stack's
// last frames, found in place and not walked again.
HL_HOOK int hl_unwind_reused(struct hl_buffer *b) {
  const struct hl_unwind_state *s = b->unwind;
  return s ? (int)s->reused : 0;
}
