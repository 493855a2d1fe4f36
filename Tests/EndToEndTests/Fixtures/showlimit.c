// Prints the soft limit on descriptors it was started with ("limit 12"), after a malloc.
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

void *volatile kept;

int main(void) {
  struct rlimit limit;
  kept = malloc(100);
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return 1;
  printf("limit %llu\n", (unsigned long long)limit.rlim_cur);
  return 0;
}
