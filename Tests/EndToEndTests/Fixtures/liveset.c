// Ground truth for the live table's cost: allocates N blocks of S bytes from make_live_set()
// and keeps them all, then prints the process's peak RSS (VmHWM, in kB) and, when the shim is
// preloaded, what its live table has mapped and how many blocks it holds. With `lost`, the
// blocks come from make_lost_list() instead, each pointing at the one before, and main returns
// with no pointer to the list: one block definitely lost, the others indirectly.
//   liveset N S [lost]
#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

__attribute__((noinline)) void **make_live_set(long n, long size) {
  void **blocks = calloc((size_t)n, sizeof *blocks);
  for (long i = 0; i < n; i++) blocks[i] = malloc((size_t)size);
  return blocks;
}

__attribute__((noinline)) void *make_lost_list(long n, long size) {
  void *head = NULL;
  for (long i = 0; i < n; i++) {
    void **block = malloc((size_t)size);
    *block = head;
    head = block;
  }
  return head;
}

static long peak_rss_kb(void) {
  FILE *f = fopen("/proc/self/status", "r");
  if (!f) return -1;
  char line[256];
  long kb = -1;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, "VmHWM:", 6) == 0) kb = atol(line + 6);
  fclose(f);
  return kb;
}

typedef uint64_t (*table_bytes_fn)(uint64_t *blocks);

int main(int argc, char **argv) {
  if (argc != 3 && (argc != 4 || strcmp(argv[3], "lost") != 0)) return 100;
  long n = atol(argv[1]), size = atol(argv[2]);
  int lost = argc == 4;
  table_bytes_fn table_bytes = (table_bytes_fn)dlsym(RTLD_DEFAULT, "heapline_live_table_bytes");
  uint64_t before = 0, after = 0, bytes = 0;
  if (table_bytes) table_bytes(&before);
  void **blocks = lost ? make_lost_list(n, size) : make_live_set(n, size);
  if (table_bytes) bytes = table_bytes(&after);
  printf("made %ld blocks of %ld bytes\n", n, size);
  printf("peak rss kB %ld\n", peak_rss_kb());
  if (table_bytes)
    printf("live table gained %llu blocks, holds %llu in %llu bytes\n",
           (unsigned long long)(after - before), (unsigned long long)after,
           (unsigned long long)bytes);
  fflush(stdout);
  return blocks == NULL;  // the blocks stay live to the end; the lost list's head is dead here
}
