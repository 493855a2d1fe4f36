// A program that puts a file of its own on every pipe's descriptor it has, once libunwind has
// made its pipe under the shim (by an allocation from a function whose CFI only libunwind can
// follow), and then allocates 1,000 times more from that function.
// Untraced it has no pipe. Prints "offset N": where its file's offset is at the end, 0 unless
// something else read or wrote the file. The file holds 64 KiB of 'A'.
// With "-" for FILE, it closes every descriptor above 2 instead, as a daemon does, and then
// allocates 100 blocks of 1,200 bytes from that function, called from outer().
//   unwindpipe FILE|-
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unwound.h"

__attribute__((noinline)) static void *outer(size_t n) { return alloc_unwound(n); }

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  free(alloc_unwound(100));
  if (!strcmp(argv[1], "-")) {
    for (int fd = 3; fd < 1024; fd++) close(fd);
    for (int i = 0; i < 100; i++) free(outer(1200));
    return 0;
  }
  int fd = open(argv[1], O_RDWR | O_CREAT | O_TRUNC, 0644);
  char data[4096];
  memset(data, 'A', sizeof data);
  for (int i = 0; i < 16; i++)
    if (fd < 0 || write(fd, data, sizeof data) != (ssize_t)sizeof data) return 3;
  if (lseek(fd, 0, SEEK_SET) != 0) return 4;
  int pipes[64], count = 0;
  DIR *dir = opendir("/proc/self/fd");
  if (!dir) return 5;
  for (struct dirent *e; (e = readdir(dir)) && count < 64;) {
    int n = atoi(e->d_name);
    struct stat st;
    if (n > 2 && n != fd && n != dirfd(dir) && fstat(n, &st) == 0 && S_ISFIFO(st.st_mode))
      pipes[count++] = n;
  }
  closedir(dir);
  for (int i = 0; i < count; i++)
    if (dup2(fd, pipes[i]) != pipes[i]) return 6;
  for (int i = 0; i < 1000; i++) free(alloc_unwound(100 + (size_t)i));
  printf("offset %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
  return 0;
}
