// The parent makes 10 blocks of 1000 bytes, forks, and waits; the child makes 500 blocks of
// 3000 bytes and exits through exit(), running destructors. The parent's trace must hold its
// own 10 blocks and nothing of the child's, and stay readable.
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(void) {
  void *mine[10];
  for (int i = 0; i < 10; i++) mine[i] = malloc(1000);
  pid_t pid = fork();
  if (pid == 0) {
    for (int i = 0; i < 500; i++) (void)malloc(3000);
    exit(0);
  }
  int status;
  waitpid(pid, &status, 0);
  (void)mine;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
