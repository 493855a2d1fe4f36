// Leak scans where the shim's helper or the scan itself cannot start. Five blocks of 1,000 to
#define _GNU_SOURCE
// 1,004 B (5,010 B) are dropped first.
//   scanfails clone   a seccomp filter fails every clone that makes no thread with EAGAIN (as
//                     RLIMIT_NPROC does), so that no ptrace helper starts; then the program
//                     calls heapline_check_leaks() with errno 0 and prints
//                     "check=RESULT errno=ERRNO lost=BLOCKS/BYTES";
//   scanfails fds     takes every descriptor left and returns from main: the scan at exit can
//                     list no thread.
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

struct heapline_leak_summary {
  uint64_t scan, lost_blocks, lost_bytes, possibly_lost_blocks, possibly_lost_bytes;
};
extern int heapline_check_leaks(struct heapline_leak_summary *) __attribute__((weak));
void *volatile sink;

static int refuse_processes(void) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EAGAIN),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "clone") == 0 && refuse_processes()) {
    perror("seccomp");
    return 3;
  }
  for (int i = 0; i < 5; i++) sink = malloc(1000 + i);
  sink = NULL;
  if (strcmp(mode, "clone") == 0) {
    if (!heapline_check_leaks) return 4;
    struct heapline_leak_summary summary = {0};
    errno = 0;
    int result = heapline_check_leaks(&summary);
    printf("check=%d errno=%d lost=%lu/%lu\n", result, errno,
           (unsigned long)summary.lost_blocks, (unsigned long)summary.lost_bytes);
  } else {
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
  }
  return 0;
}
