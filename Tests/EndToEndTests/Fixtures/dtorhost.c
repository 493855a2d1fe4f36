// Links dtorlib.c's library, whose destructor runs after the program's, at exit; prints "ok".
#include <stdio.h>

extern void *dtorlib_kept;

int main(void) {
  puts(dtorlib_kept ? "ok" : "no block");
  return 0;
}
