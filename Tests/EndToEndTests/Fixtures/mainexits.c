// The main thread keeps blocks only in private mappings of its own, an anonymous one (908 B) and
// a file's private copy (906 B; the file is argv[1]), drops one (555 B), starts a thread that
// sleeps 100 ms, and leaves with pthread_exit: the scan at exit then runs after the main thread
// has gone. Only the dropped block is lost, as memcheck says.
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static void *sleeper(void *arg) {
  (void)arg;
  usleep(100 * 1000);
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  int fd = open(argv[1], O_RDWR | O_CREAT, 0600);
  if (fd < 0 || ftruncate(fd, 4096) != 0) return 3;
  void **file = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
  void **anonymous =
      mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (file == MAP_FAILED || anonymous == MAP_FAILED) return 4;
  file[1] = malloc(906);
  anonymous[1] = malloc(908);
  void *dropped = malloc(555);
  dropped = NULL;
  pthread_t thread;
  pthread_create(&thread, NULL, sleeper, NULL);
  pthread_exit(NULL);
}
