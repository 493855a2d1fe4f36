// The table-driven unwinder (unwind.c) and the CFI it compiles (ehframe.c): shared by those two
// files and stacks.c only.
#ifndef HEAPLINE_UNWIND_H
#define HEAPLINE_UNWIND_H

#include <stdint.h>

#include "internal.h"

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
// table. Returns 0 (flags without HL_RULE_OK) when the CFI says something the walk cannot do:
// no FDE, a signal frame, a DWARF expression, a CFA in another register.
int hl_ehframe_rule(uintptr_t pc, struct hl_unwind_rule *rule);

// The caller's stack, innermost first, as libunwind's unw_backtrace gives it (return addresses,
// starting with the one into the caller). Returns the number of frames, or -1 when the table
// could not unwind it all: then the caller asks libunwind. Reuses the outer frames of the
// thread's previous stack when their saved return addresses are unchanged.
int hl_unwind_fast(struct hl_buffer *b, void **pcs, int max);
// The same from where the program entered an allocating wrapper: its return address first,
// without the shim's frames.
int hl_unwind_from(struct hl_buffer *b, void **pcs, int max, const struct hl_entry *at);
// How many frames at the end of the stack that hl_unwind_fast gave last are the previous one's
// last frames, in place: the stack trie knows their nodes already.
int hl_unwind_reused(struct hl_buffer *b);

// libunwind's own walk of the caller's stack, step by step (stacks.c): what the table leaves to
// it, the check's reference, and the stacks that signal handlers take (events.c). It raises
// hl_tls.unwinding meanwhile: libunwind must not be entered again from a signal handler.
int hl_libunwind_steps(void **pcs, int max);

// A module was unloaded: every cached rule may name code that is gone.
void hl_unwind_forget_rules(void);

// HEAPLINE_VERIFY_UNWIND: each stack is also taken by libunwind and compared.
extern int hl_unwind_verify;
void hl_unwind_report(void);  // one line on stderr with what the check found

#endif
