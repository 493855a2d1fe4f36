// Who called exit decides which frames are live at the scan at exit (LeakRootTests). Each mode
// but `stack` first leaks 4 blocks of 72 bytes that nothing points to; the mode is argv[1]:
//   deep     work() holds 3 blocks of 232 bytes in its locals and calls exit(0) from a callee:
//            its frame is live, they are reachable
//   main     main holds 2 blocks of 120 bytes in its locals and calls exit(0): reachable
//   return   main holds 2 blocks of 120 bytes in its locals and returns 0: its frame is gone,
//            they are lost
//   stack    a coroutine on a stack of 64 KiB from malloc holds 3 blocks of 232 bytes in its
//            locals and calls exit(0): they are reachable; a list of 3 blocks of 88 bytes made
//            after the stack, higher in the heap, is lost (1 definitely, 2 indirectly), since
//            the stack ends where its block does
//   left     main holds a block of 200 bytes in a local and switches to a coroutine on a stack
//            from malloc, whose work() calls exit(0): main's frame, on the stack it left, is
//            live, and nothing is lost
//   environ  main puts a string of 40 bytes in environ[0] and one of 24 in argv[0], and
//            returns 0: the process's arguments and environment are live to its end (an atexit
//            handler prints both), and they are reachable
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <unistd.h>

__attribute__((noinline)) static void leak(void) {
  for (int i = 0; i < 4; i++) {
    void *volatile lost = malloc(72);
    (void)lost;
  }
}

// Leaves no copy of leak()'s pointers in the frames below, the allocator's included (a
// recording shim's frames under malloc run some kilobytes deep).
__attribute__((noinline)) static void clobber(void) {
  volatile char area[32768];
  memset((char *)area, 0, sizeof area);
}

__attribute__((noinline)) static void leave(int status) { exit(status); }

__attribute__((noinline)) static void work(void) {
  void *volatile held[3];
  for (int i = 0; i < 3; i++) held[i] = malloc(232);
  leave(0);
}

__attribute__((noinline)) static void leak_list(void) {
  void **head = malloc(88), **second = malloc(88), **third = malloc(88);
  memset(head, 0, 88);
  memset(second, 0, 88);
  memset(third, 0, 88);
  head[0] = second;
  second[0] = third;
}

static ucontext_t caller, coroutine;

static void on_its_stack(void) { work(); }

// Runs work() on a stack of 64 KiB from malloc, made here (before the caller's other blocks,
// so lower in the heap); work() exits.
__attribute__((noinline)) static void work_on_a_heap_stack(char *stack) {
  if (!stack || getcontext(&coroutine) != 0) exit(3);
  coroutine.uc_stack.ss_sp = stack;
  coroutine.uc_stack.ss_size = 64 * 1024;
  coroutine.uc_link = &caller;
  makecontext(&coroutine, on_its_stack, 0);
  swapcontext(&caller, &coroutine);
  exit(3);  // never here
}

static void run_on_a_heap_stack(void) {
  char *stack = malloc(64 * 1024);
  leak_list();
  clobber();
  work_on_a_heap_stack(stack);
}

__attribute__((noinline)) static void leave_main_for_a_heap_stack(void) {
  void *volatile held = malloc(200);
  work_on_a_heap_stack(malloc(64 * 1024));
  free((void *)held);  // never here
}

extern char **environ;
static char **arguments;

static void print_arguments(void) {
  if (write(1, environ[0], 39) != 39 || write(1, arguments[0], 23) != 23) _exit(4);
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  if (!strcmp(argv[1], "environ")) {
    leak();
    clobber();
    arguments = argv;
    atexit(print_arguments);
    environ[0] = strdup("HEAPLINE_FIXTURE=kept-to-the-very-end!\n");
    argv[0] = strdup("exitcaller-kept-to-end\n");
    return 0;
  }
  if (!strcmp(argv[1], "stack")) run_on_a_heap_stack();
  if (!strcmp(argv[1], "left")) leave_main_for_a_heap_stack();
  leak();
  clobber();
  if (!strcmp(argv[1], "deep")) work();
  void *volatile held[2];
  for (int i = 0; i < 2; i++) held[i] = malloc(120);
  if (!strcmp(argv[1], "main")) exit(0);
  return strcmp(argv[1], "return") ? 2 : 0;
}
