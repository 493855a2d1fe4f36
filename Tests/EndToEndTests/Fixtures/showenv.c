// Prints what of the environment a traced program's exec could leave behind: LD_PRELOAD, and
// every HEAPLINE_ variable, in one line: "LD_PRELOAD=(unset) HEAPLINE_MINE=kept".
#include <stdio.h>
#include <string.h>

extern char **environ;

int main(void) {
  const char *preload = "(unset)";
  for (char **e = environ; *e; e++)
    if (strncmp(*e, "LD_PRELOAD=", 11) == 0) preload = *e + 11;
  printf("LD_PRELOAD=%s", preload);
  for (char **e = environ; *e; e++)
    if (strncmp(*e, "HEAPLINE_", 9) == 0) printf(" %s", *e);
  printf("\n");
  return 0;
}
