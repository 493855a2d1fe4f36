// The disk fills up under the shim: the file size limit is set to 64 KiB (SIGXFSZ ignored, so
// writes past it fail with EFBIG, as they would with ENOSPC), then 2,000,000 blocks of 24
// bytes are made and kept, far more than 64 KiB of trace. The program must run on unharmed.
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

int main(void) {
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit = {64 * 1024, 64 * 1024};
  setrlimit(RLIMIT_FSIZE, &limit);
  long sum = 0;
  for (long i = 0; i < 2000000; i++) {
    long *p = malloc(24);
    *p = i;
    sum += *p;
  }
  printf("sum %ld\n", sum);
  return 0;
}
