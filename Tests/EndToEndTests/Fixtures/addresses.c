// Ground truth for the trace's address coding (format 5): a pseudo-random mix of the malloc
// family that exercises every address code (a class's last freed block, an older one, a class
// that overflows its eight, blocks carved one after another, large and mapped blocks, calloc,
// realloc, posix_memalign, bursts of one size freed and made again), with each allocation's
// address and size kept as malloc returned
// them. After the mix, which allocates nothing else, prints one line per allocation in order:
// "INDEX ADDRESS SIZE" (the address in hex), then "frees N".
//   addresses STEPS
#include <stdio.h>
#include <stdlib.h>

enum { MAX = 40000, POOL = 600 };
static void *made[MAX];
static size_t sizes[MAX];
static int count, frees;
static void *pool[POOL];
static size_t pool_sizes[POOL];
static int live;
static unsigned long long state = 0x9E3779B97F4A7C15ull;

static unsigned long long next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static const size_t classes[] = {8, 24, 40, 56, 100, 200, 500, 1000, 1040, 2000, 70000, 300000};

static void keep(void *p, size_t size) {
  made[count] = p;
  sizes[count++] = size;
  pool[live] = p;
  pool_sizes[live++] = size;
}

static int pick(void) {  // mostly the newest block, as programs free temporaries
  return next() % 2 ? live - 1 : (int)(next() % (unsigned long long)live);
}

int main(int argc, char **argv) {
  int steps = argc > 1 ? atoi(argv[1]) : 20000;
  for (int i = 0; i < steps && count < MAX - 1; i++) {
    unsigned long long r = next() % 100;
    size_t size = classes[next() % (sizeof classes / sizeof *classes)] + next() % 3;
    if (r < 3 && live < POOL - 12) {
      // A burst of one size, all freed, then made again: a class fuller than its eight
      int first = live;
      for (int k = 0; k < 11; k++) keep(malloc(size), size);
      for (int k = first; k < first + 11; k++) free(pool[k]);
      frees += 11;
      live = first;
      for (int k = 0; k < 11; k++) keep(malloc(size), size);
    } else if (live >= POOL - 1 || (r < 40 && live > 0)) {
      int k = pick();
      free(pool[k]);
      frees++;
      pool[k] = pool[--live];
      pool_sizes[k] = pool_sizes[live];
    } else if (r < 50 && live > 0) {
      int k = pick();
      void *p = realloc(pool[k], size);  // a free of the old block and a new allocation
      frees++;
      made[count] = p;
      sizes[count++] = size;
      pool[k] = p;
      pool_sizes[k] = size;
    } else if (r < 58) {
      keep(calloc(3, size / 3 + 1), 3 * (size / 3 + 1));
    } else if (r < 64) {
      void *p = NULL;
      if (posix_memalign(&p, next() % 2 ? 64 : 256, size) == 0) keep(p, size);
    } else {
      keep(malloc(size), size);
    }
  }
  for (int i = 0; i < count; i++) printf("%d %lx %zu\n", i, (unsigned long)made[i], sizes[i]);
  printf("frees %d\n", frees);
  return 0;
}
