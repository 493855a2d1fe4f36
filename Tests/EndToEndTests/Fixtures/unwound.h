// alloc_unwound(n): malloc(n) from a function whose CFA its CFI gives as a DWARF expression,
// which the shim's table cannot follow: it leaves the frame that calls malloc to libunwind.
// (Code with no CFI at all is walked by its frame pointer, as libunwind walks it.)
#include <stddef.h>

void *alloc_unwound(size_t n);
__asm__(".text\n"
        ".globl alloc_unwound\n"
        ".type alloc_unwound, @function\n"
        "alloc_unwound:\n"
        "  .cfi_startproc\n"
        "  .cfi_escape 0x0f, 0x02, 0x77, 0x08\n"  // DW_CFA_def_cfa_expression: rsp + 8
        "  push %rbp\n"
        "  .cfi_escape 0x0f, 0x02, 0x77, 0x10\n"  // rsp + 16
        "  .cfi_offset %rbp, -16\n"
        "  mov %rsp, %rbp\n"
        "  call malloc@PLT\n"
        "  pop %rbp\n"
        "  .cfi_escape 0x0f, 0x02, 0x77, 0x08\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size alloc_unwound, .-alloc_unwound\n");
