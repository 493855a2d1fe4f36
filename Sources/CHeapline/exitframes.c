// The frames of the program's call to exit(), for the scan at exit (leakctl.c).
//
// A program that calls exit() from a function (a fatal error's path, or main itself) leaves its
// callers' frames as they were until the process ends: their locals and the registers they saved
// are live, as memcheck takes them, and a block held there is reachable, not lost. Only exit's
// own frames, and those of the handlers and destructors below them, are dead. When main returned,
// exit's caller is libc's start code, called by __libc_start_main: main's frame is gone, and
// nothing on the exiting thread's stack is live.
#include <libunwind.h>

#include "leakscan.h"

static struct { uintptr_t lo, hi; } hl_exit_fn, hl_start_main_fn;

void hl_exit_frames_init(void) {
  if (!hl_exit_fn.lo) hl_function_range("exit", &hl_exit_fn.lo, &hl_exit_fn.hi);
  if (!hl_start_main_fn.lo)
    hl_function_range("__libc_start_main", &hl_start_main_fn.lo, &hl_start_main_fn.hi);
}

// Whether the return address `pc` is that of a call made in [lo, hi): a call that ends its
// function (a noreturn one's) returns to the next function's first byte.
static int called_from(unw_word_t pc, uintptr_t lo, uintptr_t hi) {
  return lo && pc - 1 >= lo && pc - 1 < hi;
}

static uintptr_t exit_caller_frames(uint64_t regs[6]) {
  static const int saved[6] = {UNW_X86_64_RBX, UNW_X86_64_RBP, UNW_X86_64_R12,
                               UNW_X86_64_R13, UNW_X86_64_R14, UNW_X86_64_R15};
  unw_context_t context;
  unw_cursor_t cursor;
  if (!hl_exit_fn.lo || !hl_unwind_pipe_intact() || unw_getcontext(&context) ||
      unw_init_local(&cursor, &context))
    return 0;
  for (int n = 0; n < 512 && unw_step(&cursor) > 0; n++) {
    unw_word_t pc, sp, above;
    if (unw_get_reg(&cursor, UNW_REG_IP, &pc) < 0) return 0;
    if (!called_from(pc, hl_exit_fn.lo, hl_exit_fn.hi)) continue;
    // The cursor is at exit's frame: one step up is the frame that called it.
    if (unw_step(&cursor) <= 0 || unw_get_reg(&cursor, UNW_REG_SP, &sp) < 0) return 0;
    unw_cursor_t up = cursor;
    if (unw_step(&up) > 0 && unw_get_reg(&up, UNW_REG_IP, &above) == 0 &&
        called_from(above, hl_start_main_fn.lo, hl_start_main_fn.hi))
      return 0;  // main returned
    for (int i = 0; i < 6; i++) {
      unw_word_t value = 0;
      unw_get_reg(&cursor, saved[i], &value);
      regs[i] = value;
    }
    return sp;
  }
  return 0;  // exit was not called, or its frame cannot be found: no frame is taken as live
}

// As the shim's other walks with libunwind (stacks.c): its pipe parked, and not used once the
// program has taken its numbers.
uintptr_t hl_exit_caller_frames(uint64_t regs[6]) {
  int was = hl_tls.unwinding;
  hl_tls.unwinding = 1;
  uintptr_t sp = exit_caller_frames(regs);
  hl_tls.unwinding = was;
  return sp;
}
