// alloc_unwound(n): malloc(n) from a function without unwind information (no CFI), so that the
// shim's table has no rule for the frame that calls malloc and leaves it to libunwind.
#include <stddef.h>

void *alloc_unwound(size_t n);
__asm__(".text\n"
        ".globl alloc_unwound\n"
        ".type alloc_unwound, @function\n"
        "alloc_unwound:\n"
        "  push %rbp\n"
        "  mov %rsp, %rbp\n"
        "  call malloc@PLT\n"
        "  pop %rbp\n"
        "  ret\n"
        ".size alloc_unwound, .-alloc_unwound\n");
