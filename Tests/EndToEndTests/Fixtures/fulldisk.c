// The disk fills up under the shim: the file size limit is set to 1 MiB (SIGXFSZ ignored, so
// writes past it fail with EFBIG, as they would with ENOSPC; with the argument `signal`, left
// as it was, so that a write past it would also end the program), then 2,000,000 blocks of 24
// bytes are made and kept, each after a block of a pseudo-random size made and freed: sizes
// that no compressor can predict, several megabytes of trace. The program must run on
// unharmed: it writes no file, so untraced the limit never touches it.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "signal") != 0) signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = {1 << 20, 1 << 20};
  setrlimit(RLIMIT_FSIZE, &limit);
  long sum = 0;
  unsigned long state = 88172645463325252ul;
  for (long i = 0; i < 2000000; i++) {
    state ^= state << 13, state ^= state >> 7, state ^= state << 17;
    free(malloc(1100 + state % 3000));
    long *p = malloc(24);
    *p = i;
    sum += *p;
  }
  printf("sum %ld\n", sum);
  return 0;
}
