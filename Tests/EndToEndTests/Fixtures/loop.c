// A loop of COUNT malloc/free pairs from one place, in four sizes by turns: what a busy
// program's inner loop looks like to a tracer.
//   loop COUNT
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  long count = argc > 1 ? atol(argv[1]) : 1000000;
  unsigned long sum = 0;
  for (long i = 0; i < count; i++) {
    unsigned char *volatile p = malloc(16 + (size_t)(i & 3) * 8);
    p[0] = (unsigned char)i;
    sum += p[0];
    free(p);
  }
  printf("%ld pairs, sum %lu\n", count, sum);
  return 0;
}
