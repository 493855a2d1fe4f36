// Sets its umask to 0777, which lets it make files no one can read, and execs itself once
// (KeepWhatHappenedTests): the trace of the program after the exec is made by its shim.
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

int main(int argc, char **argv) {
  free(malloc(100));
  if (argc == 1) {
    umask(0777);
    execl("/proc/self/exe", argv[0], "again", (char *)NULL);
    return 2;
  }
  puts("after exec");
  return 0;
}
