// Where the leak scan's roots are, and where they are not (LeakRootTests). Each case has a size
// of its own:
//   file      4 blocks of 40 bytes, pointed to only from a private     reachable
//             writable mapping of a file
//   anon      5 blocks of 56 bytes, pointed to only from an anonymous  reachable
//             mapping, merged by the kernel with the one before it
//   big       a block of 256 KiB, which glibc maps whole, nothing       lost: 1 definitely,
//             points to it; it points to 2 blocks of 88 bytes         2 indirectly
//   stale     3 blocks of 200 bytes, pointed to only from a freed      lost
//             block of the main arena, past the words free overwrites
//   arena     3 blocks of 216 bytes, the same in a thread's arena     lost
//   tail      2 blocks of 168 bytes, pointed to only from past the     lost
//             bytes a reachable block asked for, where its chunk
//             held them before it was freed and given out again
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

__attribute__((noinline)) static void keep_in_file_mapping(const char *path) {
  FILE *f = fopen(path, "w+");
  if (!f || ftruncate(fileno(f), 4096) != 0) exit(3);
  void **region = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fileno(f), 0);
  fclose(f);
  if (region == MAP_FAILED) exit(3);
  for (int i = 0; i < 4; i++) region[i * 7] = malloc(40);
}

// Two anonymous mappings side by side, which the kernel shows as one: the second holds them.
__attribute__((noinline)) static void keep_in_merged_mapping(void) {
  char *both = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (both == MAP_FAILED || munmap(both + 4096, 4096) != 0) exit(3);
  void **second = mmap(both + 4096, 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
  if (second == MAP_FAILED) exit(3);
  for (int i = 0; i < 5; i++) second[100 + i] = malloc(56);
}

__attribute__((noinline)) static void leak_big(void) {
  void **big = malloc(256 * 1024);
  memset(big, 0, 256 * 1024);
  big[1000] = malloc(88);
  big[2000] = malloc(88);
}

// The pointers are written past the first two words of the freed block (tcache's next and
// key) and far below its end (a free chunk's footer): they stay in free memory, stale.
__attribute__((noinline)) static void leak_behind_free(size_t size) {
  void **holder = malloc(1000);
  memset(holder, 0, 1000);
  for (int i = 0; i < 3; i++) holder[10 + i] = malloc(size);
  free(holder);
}

void *volatile kept[2];  // roots: the blocks whose tails hold the stale pointers

// A 48-byte chunk has 40 usable bytes: its next owner, asking for 32, leaves the last word as
// the previous owner wrote it. The scan reads a block to its usable end (Swift keeps elements
// there), so the shim must zero that word before handing the chunk out.
__attribute__((noinline)) static void leak_behind_tail(void) {
  for (int i = 0; i < 2; i++) {
    void **earlier = malloc(40);
    memset(earlier, 0, 40);
    earlier[4] = malloc(168);
    free(earlier);
    kept[i] = malloc(32);  // the same chunk, from the tcache
  }
}

static void *in_thread(void *arg) {
  (void)arg;
  leak_behind_free(216);
  return NULL;
}

__attribute__((noinline)) static void clobber(void) {
  volatile char area[16384];
  memset((char *)area, 0, sizeof area);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  keep_in_file_mapping(argv[1]);
  keep_in_merged_mapping();
  leak_big();
  leak_behind_free(200);
  leak_behind_tail();
  pthread_t thread;
  pthread_create(&thread, NULL, in_thread, NULL);
  pthread_join(thread, NULL);
  clobber();
  puts("done");
  return 0;
}
