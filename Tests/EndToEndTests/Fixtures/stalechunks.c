// Blocks whose chunks held pointers before them, which they never overwrite:
// - a record of 80 bytes freed without its name (40 bytes, leaked); the next malloc of 80 gets
//   the record's chunk back and keeps it in a global, writing 6 of its bytes;
// - two nodes of 96 bytes that pointed to each other, freed; two blocks of 96 that get their
//   chunks back, never written, then dropped (2 leaks, not a cycle).
// Prints "reused R N": whether each new block got the old chunk (1) or not (0).
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct rec {
  long id, flags;
  char *name;  // at 16: past the words glibc's free lists write into a freed chunk
  long more[7];
};
struct node {
  long a, b;
  struct node *other;
  long pad[9];
};

char *line;

__attribute__((noinline)) static char *make_name(void) {
  char *s = malloc(40);
  strcpy(s, "a name");
  return s;
}

__attribute__((noinline)) static struct node *make_node(void) { return calloc(1, sizeof(struct node)); }

__attribute__((noinline)) static void *make_unwritten(void) { return malloc(sizeof(struct node)); }

int main(void) {
  struct rec *r = calloc(1, sizeof *r);
  r->name = make_name();
  free(r);  // and not its name
  line = malloc(sizeof *r);
  strcpy(line, "hello");
  int reused = (void *)line == (void *)r;

  struct node *x = make_node(), *y = make_node();
  x->other = y;
  y->other = x;
  free(x);
  free(y);
  void *volatile u = make_unwritten(), *volatile v = make_unwritten();
  int nodes = (u == x || u == y) && (v == x || v == y);
  u = v = NULL;
  printf("reused %d %d\n", reused, nodes);
  return 0;
}
