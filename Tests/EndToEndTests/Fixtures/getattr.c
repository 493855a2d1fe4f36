// Threads whose first call is pthread_getattr_np on themselves, as every thread that Rust's
// standard library starts makes (and the JVM's, and Boehm GC's): glibc allocates there while
// it holds the thread's lock, so a tracer that asks pthread_getattr_np from that allocation
// waits for the thread's lock forever.
//
//   getattr N    N such threads, one after the other; prints each one's stack size, once
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static void *look(void *arg) {
  (void)arg;
  pthread_attr_t attr;
  size_t size = 0;
  void *base;
  if (pthread_getattr_np(pthread_self(), &attr) == 0) {
    pthread_attr_getstack(&attr, &base, &size);
    pthread_attr_destroy(&attr);
  }
  return (void *)size;
}

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 4;
  size_t first = 0;
  for (int i = 0; i < n; i++) {
    pthread_t t;
    void *size;
    if (pthread_create(&t, NULL, look, NULL) != 0 || pthread_join(t, &size) != 0) return 1;
    if (i == 0) first = (size_t)size;
    else if ((size_t)size != first) return 2;
  }
  printf("%d threads, each with a stack of %zu bytes\n", n, first);
  return 0;
}
