// Eight threads that each make ten blocks of 32 bytes, free them and exit: too few calls for a
// thread in sampling mode to write its counts on the way, so they must be written at its exit.
#include <pthread.h>
#include <stdlib.h>

static void *work(void *arg) {
  for (int i = 0; i < 10; i++) free(malloc(32));
  return arg;
}

int main(void) {
  pthread_t threads[8];
  for (int t = 0; t < 8; t++) pthread_create(&threads[t], NULL, work, NULL);
  for (int t = 0; t < 8; t++) pthread_join(threads[t], NULL);
  return 0;
}
