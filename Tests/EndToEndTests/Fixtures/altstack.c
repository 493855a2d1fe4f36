// A signal handler that allocates on an alternate stack of 8 KiB (the classic SIGSTKSZ) taken
// from malloc, as a program that guards against stack overflow does. main raises the signal
// itself, outside any call into the allocator, so the handler's allocations are no undefined
// behaviour. Each time, the handler makes a block of 1,111 bytes, 3 of 777 zeroed, grows those
// to 4,444, and frees the first; main frees the last. Prints "handled N".
//   altstack ROUNDS
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

enum { STACK_BYTES = 8192 };
static void *volatile kept;  // volatile: set by the handler, which raise() calls

static void handler(int sig) {
  (void)sig;
  void *first = malloc(1111);
  void *zeroed = calloc(3, 777);
  kept = realloc(zeroed, 4444);
  free(first);
}

int main(int argc, char **argv) {
  int rounds = argc > 1 ? atoi(argv[1]) : 5;
  stack_t stack = {.ss_sp = malloc(STACK_BYTES), .ss_size = STACK_BYTES};
  if (!stack.ss_sp || sigaltstack(&stack, NULL) != 0) return 2;
  struct sigaction action = {.sa_handler = handler, .sa_flags = SA_ONSTACK};
  sigemptyset(&action.sa_mask);
  sigaction(SIGUSR1, &action, NULL);
  int handled = 0;
  for (int i = 0; i < rounds; i++) {
    raise(SIGUSR1);
    if (kept) handled++;
    free(kept);
    kept = NULL;
  }
  stack_t off = {.ss_flags = SS_DISABLE};
  sigaltstack(&off, NULL);
  free(stack.ss_sp);
  printf("handled %d\n", handled);
  return 0;
}
