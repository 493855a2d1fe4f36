// heapline_clear_stack(): zeroes the calling thread's dead stack below its caller's frame. The
// functions the caller called before left copies of their pointers there, and the frames of a
// leak check made next land on that memory: in their unused slots, those copies would pass for
// live pointers and hide leaks. The zeroing starts at the return address, so that no frame of
// this function's own is left unzeroed: it is written in assembly, and asks C how far it may go.
#include "leakscan.h"

// How many bytes below `sp` may be zeroed: 32 KiB, less on a stack with less room left (16 KiB
// are kept clear of its end).
size_t hl_clear_stack_room(uintptr_t sp) {
  size_t bytes = 32 * 1024;
  struct hl_vec maps;
  hl_tls.guard++;
  if (hl_maps_read(&maps) == 0) {
    const struct hl_mapping *m = hl_maps_find(&maps, sp);
    size_t room = m ? sp - m->lo : 0;
    if (room < bytes + 16 * 1024) bytes = room > 16 * 1024 ? (room - 16 * 1024) & ~(size_t)7 : 0;
  } else {
    bytes = 0;
  }
  hl_vec_free(&maps);
  hl_tls.guard--;
  return bytes;
}

__asm__(
    ".text\n"
    ".globl heapline_clear_stack\n"
    ".type heapline_clear_stack, @function\n"
    "heapline_clear_stack:\n"
    "  .cfi_startproc\n"
    "  mov %rsp, %rdi\n"  // the return address's slot: the caller's stack ends here
    "  sub $8, %rsp\n"
    "  .cfi_adjust_cfa_offset 8\n"
    "  call hl_clear_stack_room\n"
    "  add $8, %rsp\n"
    "  .cfi_adjust_cfa_offset -8\n"
    "  mov %rsp, %rdi\n"
    "  mov %rsp, %rcx\n"
    "  sub %rax, %rcx\n"  // zero [rsp - room, rsp), hl_clear_stack_room's frames included
    "1:\n"
    "  cmp %rcx, %rdi\n"
    "  jbe 2f\n"
    "  sub $8, %rdi\n"
    "  movq $0, (%rdi)\n"
    "  jmp 1b\n"
    "2:\n"
    "  ret\n"
    "  .cfi_endproc\n"
    ".size heapline_clear_stack, .-heapline_clear_stack\n");
