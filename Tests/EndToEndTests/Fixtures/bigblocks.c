// Frees a block of 30 MiB (glibc then serves blocks up to 32 MiB from its heap), allocates 16
// MiB and never writes it, then reallocs it to 28 MiB, never writing that either. Prints
// "rss BASE MALLOC REALLOC" (VmRSS in kB before and after each) and "zero Z": whether every
// byte of the 28 MiB reads zero (1).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static long rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  char line[256];
  long kb = -1;
  while (f && fgets(line, sizeof line, f))
    if (strncmp(line, "VmRSS:", 6) == 0) kb = atol(line + 6);
  if (f) fclose(f);
  return kb;
}

int main(void) {
  free(malloc(30 << 20));
  long base = rss_kb();
  char *block = malloc(16 << 20);
  long allocated = rss_kb();
  block = realloc(block, 28 << 20);
  long grown = rss_kb();
  int zero = 1;
  for (size_t i = 0; i < (28u << 20); i += 4096) zero &= block[i] == 0 && block[i + 4095] == 0;
  printf("rss %ld %ld %ld\nzero %d\n", base, allocated, grown, zero);
  free(block);
  return 0;
}
