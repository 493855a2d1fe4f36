// The table-driven unwinder (unwind.c) and the CFI it compiles (ehframe.c): shared by those two
// files and stacks.c only.
#ifndef HEAPLINE_UNWIND_H
#define HEAPLINE_UNWIND_H

#include <libunwind.h>
#include <stdint.h>

#include "internal.h"

enum { HL_WALK_MAX = HL_MAX_DEPTH + 8 };

// What taking a stack works in, kept with the buffer's unwinder state rather than on the
// program's stack: a signal handler on an alternate stack of SIGSTKSZ (8 KiB) that allocates
// has about 5 KiB left once the kernel's signal frame is in, and these arrays are 6 KiB, and
// libunwind takes 4.5 KiB more. The arrays belong to the thread that holds the buffer;
// libunwind's context, cursor and stack to whoever raised hl_tls.unwinding, which a signal
// handler finds raised and then leaves libunwind alone.
// What the walk used to take one frame's caller: the values rbp and rbx had when the frame's
// rule was applied, where the rule found the caller's rbp and rbx saved (from the frame's CFA,
// which is the next frame's slot + 8), and the rule's HL_RULE_CFA_RBP, _CFA_RBX, _RBP_SAVED,
// _RBX_SAVED and _RBX_LOST flags. A walk that meets the same return addresses, saved registers
// and incoming registers walks alike.
struct hl_frame_regs {
  uintptr_t rbp_in, rbx_in;
  int16_t rbp_at, rbx_at;
  uint16_t flags;
};

struct hl_unwind_scratch {
  void *pcs[HL_WALK_MAX], *fast[HL_WALK_MAX];
  uintptr_t slots[HL_WALK_MAX];
  struct hl_frame_regs regs[HL_WALK_MAX];
  unw_context_t context;
  unw_cursor_t cursor;
  void *stack_top;  // of the stack libunwind runs on
};
// The buffer's scratch, made with its unwinder state when there is none; NULL when it could not
// be mapped. The holder of the buffer only.
struct hl_unwind_scratch *hl_unwind_scratch(struct hl_buffer *b);
// The buffer's scratch if it was made already: for a signal handler, which must not make it.
struct hl_unwind_scratch *hl_unwind_scratch_made(struct hl_buffer *b);

// How to step from a frame to its caller on x86-64, compiled from the CFI that covers a pc: the
// CFA is rsp, rbp or rbx plus `cfa_offset`, the return address lies at CFA - 8, and rbp and rbx
// were saved at CFA + their offsets (or kept their values). Anything else is not expressed: the
// walk gives up.
enum {
  HL_RULE_KNOWN = 1,      // the entry holds a result (a rule, or the fact that there is none)
  HL_RULE_OK = 2,         // a rule the walk can use
  HL_RULE_CFA_RBP = 4,    // CFA = rbp + offset, not rsp + offset
  HL_RULE_RBP_SAVED = 8,  // rbp was saved at CFA + rbp_offset
  HL_RULE_LAST = 16,      // the return address is undefined: the outermost frame
  HL_RULE_CFA_RBX = 32,   // CFA = rbx + offset
  HL_RULE_RBX_SAVED = 64,  // rbx was saved at CFA + rbx_offset
  HL_RULE_RBX_LOST = 128,  // the caller's rbx is somewhere the walk cannot follow
};
struct hl_unwind_rule {
  int32_t cfa_offset;
  int16_t rbp_offset, rbx_offset;
  uint16_t flags;
};

// Compiles the rule for `pc` from its module's .eh_frame, found through .eh_frame_hdr's sorted
// table. Code that no CFI covers (a JIT's, in no module; a module's code without FDEs) gets the
// frame pointer's rule, as libunwind falls back to it. Returns 0 (flags without HL_RULE_OK)
// when the CFI says something the walk cannot do: a signal frame, a DWARF expression, a CFA in
// another register.
int hl_ehframe_rule(uintptr_t pc, struct hl_unwind_rule *rule);

// The caller's stack, innermost first, as libunwind's unw_backtrace gives it (return addresses,
// starting with the one into the caller). Returns the number of frames, or -1 when the table
// could not unwind it all: then the caller asks libunwind. Reuses the outer frames of the
// thread's previous stack when their saved return addresses are unchanged.
int hl_unwind_fast(struct hl_buffer *b, void **pcs, int max);
// The same from where the program entered an allocating wrapper: its return address first,
// without the shim's frames.
int hl_unwind_from(struct hl_buffer *b, void **pcs, int max, const struct hl_entry *at);
// A stack taken from `at` before and unchanged since: its depth, with its id in `id` (and its
// frames in `pcs` when not NULL); -1 when there is none.
int hl_unwind_memo_find(struct hl_buffer *b, const struct hl_entry *at, uint32_t *id, void **pcs);
// Keeps the stack that hl_unwind_from just walked from `at`, whose first `depth` frames are `id`.
void hl_unwind_memo_keep(struct hl_buffer *b, const struct hl_entry *at, int depth, uint32_t id);
// How many frames at the end of the stack that hl_unwind_fast gave last are the previous one's
// last frames, in place: the stack trie knows their nodes already.
int hl_unwind_reused(struct hl_buffer *b);

// libunwind's own walk of the caller's stack, step by step (stacks.c): what the table leaves to
// it, the check's reference, and the stacks that signal handlers take (events.c). It raises
// hl_tls.unwinding meanwhile: libunwind must not be entered again from a signal handler.
int hl_libunwind_steps(struct hl_unwind_scratch *w, void **pcs, int max);

// A module was unloaded: every cached rule may name code that is gone.
void hl_unwind_forget_rules(void);

// HEAPLINE_VERIFY_UNWIND: each stack is also taken by libunwind and compared.
extern int hl_unwind_verify;
void hl_unwind_report(void);  // one line on stderr with what the check found

#endif
