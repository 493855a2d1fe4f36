// Ground truth for scans beside mprotect: 64 page-aligned blocks of 4096 bytes from
// make_pages(), the pointers to 32 of them kept in a global array and to the other 32 only
// XOR-masked (lost), while a thread makes all their pages unreadable and readable again, over
// and over, for SECONDS. At the end every page is readable again, and the 32 masked blocks are
// what a scan at exit must find lost.
//   guardpages SECONDS
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { BLOCKS = 64, PAGE = 4096 };
static const uintptr_t mask = 0x5555555555555555u;
static uintptr_t masked[BLOCKS];
void *kept[BLOCKS / 2];
static volatile int stop;

static void protect_all(int prot) {
  for (int i = 0; i < BLOCKS; i++) mprotect((void *)(masked[i] ^ mask), PAGE, prot);
}

static void *toggle(void *arg) {
  long rounds = 0;
  for (; !stop; rounds++) {
    protect_all(PROT_NONE);
    protect_all(PROT_READ | PROT_WRITE);
  }
  return (void *)rounds;
}

__attribute__((noinline)) static void make_pages(void) {
  for (int i = 0; i < BLOCKS; i++) {
    void *p = aligned_alloc(PAGE, PAGE);
    memset(p, 0, PAGE);
    masked[i] = (uintptr_t)p ^ mask;
    if (i % 2 == 0) kept[i / 2] = p;
  }
}

int main(int argc, char **argv) {
  if (argc != 2) return 100;
  double seconds = atof(argv[1]);
  make_pages();
  pthread_t thread;
  pthread_create(&thread, NULL, toggle, NULL);
  struct timespec pause = {(time_t)seconds, (long)((seconds - (time_t)seconds) * 1e9)};
  nanosleep(&pause, NULL);
  stop = 1;
  void *rounds;
  pthread_join(thread, &rounds);
  protect_all(PROT_READ | PROT_WRITE);
  printf("toggled %s\n", (long)rounds > 0 ? "yes" : "no");
  return 0;
}
