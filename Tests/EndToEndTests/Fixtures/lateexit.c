// A thread that ends while the process exits (NoSilentLossTests): it makes 100 blocks of 312
// bytes, waits, and is let go the moment before main calls exit(0); it then sleeps the
// microseconds argv[1] gives and returns, so that its end falls while the recording stops.
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static int go;
void *volatile blocks[100];  // not static: the compiler may drop mallocs nobody reads

static void *worker(void *delay) {
  for (int i = 0; i < 100; i++) blocks[i] = malloc(312);
  pthread_mutex_lock(&lock);
  while (!go) pthread_cond_wait(&changed, &lock);
  pthread_mutex_unlock(&lock);
  usleep((useconds_t)atoi(delay));
  return NULL;
}

int main(int argc, char **argv) {
  pthread_t thread;
  if (argc < 2 || pthread_create(&thread, NULL, worker, argv[1]) != 0) return 2;
  usleep(20000);
  pthread_mutex_lock(&lock);
  go = 1;
  pthread_cond_signal(&changed);
  pthread_mutex_unlock(&lock);
  exit(0);
}
