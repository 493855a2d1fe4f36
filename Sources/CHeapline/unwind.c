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

// Rules cached per buffer, so only the thread that holds the buffer touches them. A buffer is
// handed to the next thread when its owner exits: the rules stay true, and the previous stack is
// checked word by word before any of it is used.
enum { HL_RULES = 4096 };
struct hl_rule_entry {
  uintptr_t pc;
  struct hl_unwind_rule rule;
};
// libunwind's stack (stacks.c): it takes about 4.5 KiB of stack to walk through a signal frame,
// which a handler on a SIGSTKSZ alternate stack does not have. The first page is a guard.
enum { HL_LIBUNWIND_STACK = 32 * 1024 };

// A stack taken before, whole, found again from where it starts (memo_find).
enum { HL_MEMO_SETS = 8, HL_MEMO_WAYS = 4, HL_MEMO_DEPTH = HL_DEFAULT_DEPTH,
       HL_RULE_CFA_REGS = HL_RULE_CFA_RBP | HL_RULE_CFA_RBX };
struct hl_memo {
  uint32_t depth, id;  // depth 0: empty
  uint32_t uses;       // HL_RULE_CFA_RBP, HL_RULE_CFA_RBX: the walk took a CFA from rbp, rbx
  uintptr_t rbp, rbx;  // their values at entry
  uintptr_t slot[HL_MEMO_DEPTH], pc[HL_MEMO_DEPTH];
};

struct hl_unwind_state {
  _Alignas(4096) char libunwind_stack[HL_LIBUNWIND_STACK];
  uint32_t generation;  // of hl_rules_generation when the rules were made
  uint32_t prev_depth;  // 0: no previous stack to reuse
  uint32_t prev_complete;  // it ended at the outermost frame, not at the depth limit
  uint32_t reused;  // frames at the end of the last walk that are the previous stack's last
  uint32_t prev_uses;  // HL_RULE_CFA_REGS that the previous stack's walk took a CFA from
  struct hl_memo memo[HL_MEMO_SETS][HL_MEMO_WAYS];
  uint8_t memo_next[HL_MEMO_SETS];  // the way a set's next stack replaces
  uintptr_t prev_pcs[HL_WALK_MAX];
  uintptr_t prev_slots[HL_WALK_MAX];  // where each return address was read
  struct hl_unwind_scratch scratch;
  struct hl_rule_entry rules[HL_RULES];
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

// Where the thread's stack lies, when `sp` is on it: the mapping that holds it, from /proc, read
// once a thread (and again when its stack pointer goes outside what was seen). A thread that
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
  uintptr_t tp;
  __asm__("mov %%fs:0, %0" : "=r"(tp));
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
    memset(s->rules, 0, sizeof s->rules);
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

// The rule for the frame that returns to `pc`: the call is the instruction before it.
static inline const struct hl_unwind_rule *rule_for(struct hl_unwind_state *s, uintptr_t pc) {
  struct hl_rule_entry *e = &s->rules[((pc * 0x9E3779B97F4A7C15ull) >> 40) & (HL_RULES - 1)];
  if (HL_UNLIKELY(e->pc != pc || !(e->rule.flags & HL_RULE_KNOWN))) {
    hl_ehframe_rule(pc - 1, &e->rule);
    e->pc = pc;
  }
  return &e->rule;
}

static inline int readable(uintptr_t at, uintptr_t lo, uintptr_t hi) {
  return at >= lo && at <= hi - 8 && !(at & 7);
}

// How many frames of the previous stack lie beyond its frame `j`, when every one of their return
// addresses is still in its slot; -1 otherwise. `have` frames are unwound already, up to and
// including the one that matched `j`. A previous stack cut at the depth limit reaches the limit
// again only when this one is at least as deep where they meet.
// A stack's slots rise strictly from its innermost frame out (the walk never steps to a CFA
// at or below the slot it left), and each was readable when it was found: so when the first
// and the last lie within the stack now, all of them do, and the loop only compares.
static int reusable(const struct hl_unwind_state *s, uint32_t j, int have, uintptr_t lo,
                    uintptr_t hi) {
  if (!s->prev_complete && have <= (int)j) return -1;
  uint32_t depth = s->prev_depth;
  if (j + 1 >= depth) return 0;
  if (!readable(s->prev_slots[j + 1], lo, hi) || !readable(s->prev_slots[depth - 1], lo, hi))
    return -1;
  for (uint32_t k = j + 1; k < depth; k++)
    if (*(const uintptr_t *)s->prev_slots[k] != s->prev_pcs[k]) return -1;
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
  if (max > HL_WALK_MAX) max = HL_WALK_MAX;
  uint32_t j = 0;  // the previous stack's first frame whose slot is not below this one's
  int n = 0, complete = 1, rbx_known = 1;
  uint32_t uses = 0;
  int in_place = 0;  // frames from here on are the previous stack's, at the same places
  uintptr_t pc = *(const uintptr_t *)slot;
  while (n < max) {
    pcs[n] = (void *)pc;
    slots[n++] = slot;
    while (j < s->prev_depth && s->prev_slots[j] < slot) j++;
    if (j < s->prev_depth && s->prev_slots[j] == slot && s->prev_pcs[j] == pc) {
      int more = reusable(s, j, n, lo, hi);
      if (more >= 0) {
        complete = s->prev_complete && n + more <= max;
        if (n + more > max) more = max - n;
        if (j + 1 == (uint32_t)n) in_place = n;
        // The slots are copied even when in place, as they always were: writing them also
        // overwrites the dead stack below the program's frames, where stale heap pointers could
        // pass for live ones in a leak scan of a thread that later parks over them.
        memcpy(pcs + n, s->prev_pcs + j + 1, (size_t)more * sizeof *pcs);
        memcpy(slots + n, s->prev_slots + j + 1, (size_t)more * sizeof *slots);
        n += more;
        s->reused = (uint32_t)more;
        uses |= s->prev_uses;  // the frames it ran through, or more: never fewer
        goto done;
      }
    }
    const struct hl_unwind_rule *r = rule_for(s, pc);
    if (!(r->flags & HL_RULE_OK)) return -1;
    if (r->flags & HL_RULE_LAST) goto done;
    uses |= r->flags & HL_RULE_CFA_REGS;
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
      if (readable(at, lo, hi)) rbx = *(const uintptr_t *)at;
      else rbx_known = 0;
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
  s->prev_uses = uses;
  // A stack of the same depth where it met the previous one (a loop's next call) has the rest
  // of it in place already: only the frames walked are copied.
  int changed = in_place ? in_place : n;
  for (int k = 0; k < changed; k++) s->prev_pcs[k] = (uintptr_t)pcs[k];
  memcpy(s->prev_slots, slots, (size_t)changed * sizeof *slots);
  return n;
}

// The stacks a program allocates from in a loop take turns (a Swift churn's three classes, the
// dozen places an interpreter's loop allocates from), so the previous stack alone is seldom the
// next one. A thread keeps the last few whole, by where they start (the entry's stack pointer
// and return address): found there again, with every return address of it still in its slot
// (and rbp and rbx as they were, when the walk took a CFA from them), the stack is the same,
// by the rule the walk itself follows where it meets the previous stack (reusable), and its id
// is known without a walk or a lookup.
static inline uint32_t memo_set(uintptr_t slot, uintptr_t pc) {
  return (uint32_t)(((slot ^ pc) * 0x9E3779B97F4A7C15ull) >> 61);
}

// Stacks from one call of malloc take turns (a Swift class's allocation always comes from
// swift_slowAlloc at the same depth), so a set holds several, each looked at until its first
// frame that differs.
HL_HOOK int hl_unwind_memo_find(struct hl_buffer *b, const struct hl_entry *at, uint32_t *id,
                                void **pcs) {
  struct hl_unwind_state *s = state_of(b);
  if (!s || !stack_bounds(at->sp)) return -1;
  uintptr_t pc = *(const uintptr_t *)at->sp;
  const struct hl_memo *set = s->memo[memo_set(at->sp, pc)];
  for (int way = 0; way < HL_MEMO_WAYS; way++) {
    const struct hl_memo *m = &set[way];
    uint32_t depth = m->depth, k = 1;
    if (!depth || m->slot[0] != at->sp || m->pc[0] != pc) continue;
    if (((m->uses & HL_RULE_CFA_RBP) && m->rbp != at->rbp) ||
        ((m->uses & HL_RULE_CFA_RBX) && m->rbx != at->rbx) || m->slot[depth - 1] > hl_stack.hi - 8)
      continue;
    while (k < depth && *(const uintptr_t *)m->slot[k] == m->pc[k]) k++;
    if (k < depth) continue;
    if (pcs)
      for (k = 0; k < depth; k++) pcs[k] = (void *)m->pc[k];
    *id = m->id;
    return (int)depth;
  }
  return -1;
}

// After a walk from `at` whose first `depth` frames made stack `id`.
HL_HOOK void hl_unwind_memo_keep(struct hl_buffer *b, const struct hl_entry *at, int depth,
                                 uint32_t id) {
  struct hl_unwind_state *s = b->unwind;
  if (!s || depth <= 0 || depth > HL_MEMO_DEPTH || s->prev_depth < (uint32_t)depth ||
      s->prev_slots[0] != at->sp)
    return;
  uint32_t set = memo_set(at->sp, s->prev_pcs[0]);
  struct hl_memo *m = &s->memo[set][s->memo_next[set]++ % HL_MEMO_WAYS];
  m->depth = (uint32_t)depth;
  m->id = id;
  m->uses = s->prev_uses;
  m->rbp = at->rbp;
  m->rbx = at->rbx;
  memcpy(m->slot, s->prev_slots, (size_t)depth * sizeof *m->slot);
  memcpy(m->pc, s->prev_pcs, (size_t)depth * sizeof *m->pc);
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

// hl_unwind_fast(b, pcs, max): the slot of the return address is the stack pointer at entry,
// and rbp and rbx are still the caller's; a tail jump leaves the walk to return straight to it.
__asm__(
    ".section hl_text,\"ax\",@progbits\n"
    ".globl hl_unwind_fast\n"
    ".hidden hl_unwind_fast\n"
    ".type hl_unwind_fast, @function\n"
    "hl_unwind_fast:\n"
    "  .cfi_startproc\n"
    "  mov %rsp, %rcx\n"
    "  mov %rbp, %r8\n"
    "  mov %rbx, %r9\n"
    "  jmp hl_unwind_walk\n"
    "  .cfi_endproc\n"
    ".size hl_unwind_fast, .-hl_unwind_fast\n"
    ".previous\n");

// hl_on_stack: the stack pointer moves to `top`, rbp keeps the caller's frame, and the CFI says
// so, so that libunwind walks from the new stack back to the caller's. In the shim's section:
// a stack taken on the new stack drops it with the shim's other frames.
__asm__(
    ".section hl_text,\"ax\",@progbits\n"
    ".globl hl_on_stack\n"
    ".hidden hl_on_stack\n"
    ".type hl_on_stack, @function\n"
    "hl_on_stack:\n"
    "  .cfi_startproc\n"
    "  push %rbp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  .cfi_rel_offset %rbp, 0\n"
    "  mov %rsp, %rbp\n"
    "  .cfi_def_cfa_register %rbp\n"
    "  mov %rdx, %rsp\n"
    "  mov %rdi, %rax\n"
    "  mov %rsi, %rdi\n"
    "  call *%rax\n"
    "  mov %rbp, %rsp\n"
    "  pop %rbp\n"
    "  .cfi_def_cfa %rsp, 8\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size hl_on_stack, .-hl_on_stack\n"
    ".previous\n");
