// The unwinder's two ways in that C cannot write: hl_unwind_fast, which hands the walk the
// stack pointer and registers its caller left, and hl_on_stack, which runs a function on another
// stack (libunwind's, the leak scan's) and leaves CFI that leads back to the caller's. Both live
// in the shim's section, so that stacks taken through them drop their frames with the shim's.
#include "unwind.h"

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

// In the shim's section, as its callers: stacks taken through it drop its frame with theirs.
// While the thread is on that stack, a signal handler's call takes its own stack as it would
// inside libunwind (hl_tls.unwinding), which runs there too.
HL_HOOK void hl_aside(void (*fn)(void *), void *arg, void *top) {
  uintptr_t left = hl_tls.aside_sp;  // a signal handler's call inside another's
  int unwinding = hl_tls.unwinding;
  hl_tls.aside_sp = (uintptr_t)__builtin_frame_address(0);
  hl_tls.unwinding = 1;
  hl_on_stack(fn, arg, top);
  hl_tls.unwinding = unwinding;
  hl_tls.aside_sp = left;
}
