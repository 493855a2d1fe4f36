// Silent loss is what these must show not to happen. The mode is argv[1]:
//   threads   20,000 detached threads, each makes 2 blocks of 1,000 bytes and exits; more of
//             them live at once than the shim has buffers
//   tight     grows its heap by 48 MiB and keeps it, then lowers its own address-space limit
//             (as `ulimit -v` would) to just above what it uses, and makes 400,000 blocks of 24
//             bytes from that heap, printing how many it made; the shim's tables cannot grow
#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

enum { THREADS = 20000, TIGHT_BLOCKS = 400000 };
static void *blocks[2 * THREADS];
static atomic_int next_block, finished;

static void *one_thread(void *arg) {
  (void)arg;
  for (int i = 0; i < 2; i++) blocks[atomic_fetch_add(&next_block, 1)] = malloc(1000);
  atomic_fetch_add(&finished, 1);
  return NULL;
}

static int crowd(void) {
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  pthread_attr_setstacksize(&attr, 64 * 1024);
  for (int i = 0; i < THREADS; i++) {
    pthread_t t;
    while (pthread_create(&t, &attr, one_thread, NULL) != 0) usleep(100);  // EAGAIN: wait
  }
  while (atomic_load(&finished) < THREADS) usleep(1000);
  printf("threads %d blocks %d\n", THREADS, atomic_load(&next_block));
  return 0;
}

static void *tight_blocks[TIGHT_BLOCKS];

static int tight(void) {
  mallopt(M_MMAP_THRESHOLD, 64 * 1024 * 1024);  // the big block comes from the heap…
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024 * 1024);  // …which keeps it once freed
  free(malloc(48 * 1024 * 1024));
  unsigned long pages = 0;
  FILE *statm = fopen("/proc/self/statm", "r");
  if (!statm || fscanf(statm, "%lu", &pages) != 1) return 2;
  fclose(statm);
  char line[64];
  int len = snprintf(line, sizeof line, "made ");
  struct rlimit limit;
  limit.rlim_cur = limit.rlim_max = pages * (unsigned long)sysconf(_SC_PAGESIZE) + 256 * 1024;
  if (setrlimit(RLIMIT_AS, &limit) != 0) return 3;
  int made = 0;
  while (made < TIGHT_BLOCKS && (tight_blocks[made] = malloc(24))) made++;
  len += snprintf(line + len, sizeof line - (size_t)len, "%d\n", made);
  if (write(1, line, (size_t)len) != len) return 4;  // no stdio buffer from here on
  return 0;
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (!strcmp(mode, "threads")) return crowd();
  if (!strcmp(mode, "tight")) return tight();
  return 1;
}
