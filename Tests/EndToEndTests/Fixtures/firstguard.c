// A block of 8,192 B whose first page the program made unreadable (mprotect PROT_NONE, a guard
// page in front), the only holder of a block of 100 B through a word in its second page:
//   firstguard dropped   nothing holds it: 8,192 B definitely lost, the 100 B indirectly;
//   firstguard kept      a global holds its start: nothing lost;
//   firstguard cookie    a global holds its start plus 8 (the shape of a C++ array past its
//                        cookie): both possibly lost, 8,292 B.
#include <malloc.h>
#include <string.h>
#include <sys/mman.h>

void *volatile held;

int main(int argc, char **argv) {
  char *block = memalign(4096, 8192);
  void *inner = malloc(100);
  memcpy(block + 4096, &inner, sizeof inner);
  mprotect(block, 4096, PROT_NONE);
  inner = NULL;
  if (argc > 1 && strcmp(argv[1], "kept") == 0) held = block;
  else if (argc > 1 && strcmp(argv[1], "cookie") == 0) held = block + 8;
  return 0;
}
