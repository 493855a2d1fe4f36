// Blocks whose reachability the leak tests know exactly. Each case has a size of its own, so
// that its size class names it in the report:
//   simple    3 blocks of 40 bytes, nothing points to them          lost: one root leak, 3 times
//   list      10 nodes of 64 bytes, the head lost                   lost: 1 definitely, 9 indirectly
//   cycle     2 nodes of 90 bytes pointing to each other            lost: a cycle of 2
//   interior  110 bytes, a global points 24 bytes into it           possibly lost
//   global    120 bytes, a global points to it                      reachable
//   stack     136 bytes, only another thread's stack points to it   reachable
//   register  150 bytes, only another thread's r12 points into it   reachable
//   xor       170 bytes, a global holds its address XORed           lost
//   binned    1,112 bytes, the chunk after it freed: malloc's main  lost
//             arena points to that chunk's header, its last word
// The program checks for leaks through the C API, with both threads waiting, then lets them
// free their blocks and exits (the exit scan then finds the same, less the threads' blocks).
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct summary {
  uint64_t scan, lost_blocks, lost_bytes, possibly_lost_blocks, possibly_lost_bytes;
};

#define KEY 0x5a5a5a5a5a5a5a5aull
static char *interior;
static void *global;
static uintptr_t hidden;
static volatile int ready, stop;

struct node {
  struct node *next;
  char pad[56];
};

__attribute__((noinline)) static void leak_simple(void) {
  for (int i = 0; i < 3; i++) memset(malloc(40), 1, 40);
}

__attribute__((noinline)) static void leak_list(void) {
  struct node *head = NULL;
  for (int i = 0; i < 10; i++) {
    struct node *n = malloc(sizeof *n);  // LEAK_LIST_LINE
    n->next = head;
    head = n;
  }
}

__attribute__((noinline)) static void leak_cycle(void) {
  void **a = malloc(90), **b = malloc(90);
  memset(a, 0, 90);
  memset(b, 0, 90);
  a[0] = b;
  b[0] = a;
}

__attribute__((noinline)) static void keep(void) {
  interior = (char *)malloc(110) + 24;
  global = malloc(120);
  hidden = (uintptr_t)malloc(170) ^ KEY;
}

static void *on_stack(void *arg) {
  (void)arg;
  void *volatile block = malloc(136);
  __atomic_add_fetch(&ready, 1, __ATOMIC_SEQ_CST);
  while (!stop) __asm__ volatile("pause");
  free(block);
  return NULL;
}

// The block's address is XORed in memory; the loop keeps it, plain and 16 bytes on, in r12 only.
static void *in_register(void *arg) {
  (void)arg;
  uintptr_t v = (uintptr_t)malloc(150) ^ KEY;
  __asm__ volatile(
      "mov %[v], %%r12\n\t"
      "xor %[k], %%r12\n\t"
      "add $16, %%r12\n\t"
      "xor %%eax, %%eax\n\t"  // what malloc left in the registers that calls may change
      "xor %%ecx, %%ecx\n\t"
      "xor %%edx, %%edx\n\t"
      "xor %%esi, %%esi\n\t"
      "xor %%edi, %%edi\n\t"
      "xor %%r8d, %%r8d\n\t"
      "xor %%r9d, %%r9d\n\t"
      "xor %%r10d, %%r10d\n\t"
      "xor %%r11d, %%r11d\n\t"
      "lock incl %[ready]\n\t"
      "1: pause\n\t"
      "cmpl $0, %[stop]\n\t"
      "je 1b\n\t"
      "lea -16(%%r12), %%rdi\n\t"
      "call free@PLT\n\t"
      : [ready] "+m"(ready)
      : [v] "r"(v), [k] "r"(KEY), [stop] "m"(stop)
      : "r12", "rdi", "rax", "rcx", "rdx", "rsi", "r8", "r9", "r10", "r11", "memory", "cc");
  return NULL;
}

// Two neighbour chunks (1,112 bytes: a block uses all of its chunk, up to the next one's
// header), the first leaked and the second freed: glibc's main arena then points to the
// second's header (in a bin, or as the top), which is the first block's last word. Other
// free chunks may come first: the attempts that are no neighbours are freed after.
__attribute__((noinline)) static void leak_binned(void) {
  void *tried[16];
  int n = 0;
  char *a = malloc(1112), *b = malloc(1112);
  while (b != a + 1120 && n < 14) {
    tried[n++] = a;
    tried[n++] = b;
    a = malloc(1112);
    b = malloc(1112);
  }
  memset(a, 0, 1112);
  free(b);
  while (n) free(tried[--n]);
}

// Zeroes the dead stack below main, where the leaking functions left their pointers.
__attribute__((noinline)) static void clobber(void) {
  volatile char area[16384];
  memset((char *)area, 0, sizeof area);
}

int main(void) {
  int (*check)(struct summary *) = (int (*)(struct summary *))dlsym(RTLD_DEFAULT,
                                                                    "heapline_check_leaks");
  leak_simple();
  leak_list();
  leak_cycle();
  keep();
  pthread_t threads[2];
  pthread_create(&threads[0], NULL, on_stack, NULL);
  pthread_create(&threads[1], NULL, in_register, NULL);
  while (ready < 2) __asm__ volatile("pause");
  leak_binned();  // last: nothing may allocate from the free chunk before the check
  clobber();
  struct summary found = {0};
  int err = check ? check(&found) : -1;
  printf("check %d: %llu lost in %llu blocks, %llu possibly lost in %llu blocks\n", err,
         (unsigned long long)found.lost_bytes, (unsigned long long)found.lost_blocks,
         (unsigned long long)found.possibly_lost_bytes,
         (unsigned long long)found.possibly_lost_blocks);
  stop = 1;
  pthread_join(threads[0], NULL);
  pthread_join(threads[1], NULL);
  clobber();
  return 0;
}
