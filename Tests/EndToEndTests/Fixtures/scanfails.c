// Leak scans where the shim's helper or the scan itself cannot start. Five blocks of 1,000 to
#define _GNU_SOURCE
// 1,004 B (5,010 B) are dropped first.
//   scanfails clone   a seccomp filter fails every clone that makes no thread with EAGAIN (as
//                     RLIMIT_NPROC does), so that no ptrace helper starts; then the program
//                     calls heapline_check_leaks() with errno 0 and prints
//                     "check=RESULT errno=ERRNO lost=BLOCKS/BYTES";
//   scanfails fds     takes every descriptor left and returns from main: the scan at exit can
//                     list no thread.
//   scanfails kill    a seccomp filter, installed with prctl, kills the process at any clone
//                     that makes no thread (as systemd's SystemCallFilter kills); main returns
//                     and the program prints "done"
//   scanfails kill-raw  the same filter, installed with the seccomp system call
//   scanfails kill-mincore  a filter, installed with prctl, kills the process at any mincore
//                     (which the program never calls; libunwind and the shim do); main returns
//                     and the program prints "done"
//   scanfails kill-mincore-raw  the same filter, installed with syscall(SYS_seccomp), as
//                     libseccomp installs its filters
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

// Fails (`action` SECCOMP_RET_ERRNO | EAGAIN) or kills at every clone that makes no thread.
static int refuse_processes(uint32_t action, int raw) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone, 0, 3),
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
      BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, CLONE_THREAD, 1, 0),
      BPF_STMT(BPF_RET | BPF_K, action),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  if (raw) return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

// Kills the process at system call `nr`; installed with the seccomp system call when `raw`.
static int kill_at(int nr, int raw) {
  struct sock_filter filter[] = {
      BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
      BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)nr, 0, 1),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
      BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) return -1;
  if (raw) return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &program);
  return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program);
}

int main(int argc, char **argv) {
  const char *mode = argc > 1 ? argv[1] : "";
  if (strncmp(mode, "kill-mincore", 12) == 0) {
    if (kill_at(SYS_mincore, strcmp(mode, "kill-mincore-raw") == 0)) return 3;
    for (int i = 0; i < 5; i++) sink = malloc(1000 + i);
    printf("done\n");
    return 0;
  }
  int killing = strcmp(mode, "kill") == 0 || strcmp(mode, "kill-raw") == 0;
  if ((strcmp(mode, "clone") == 0 && refuse_processes(SECCOMP_RET_ERRNO | EAGAIN, 0)) ||
      (killing && refuse_processes(SECCOMP_RET_KILL_PROCESS, strcmp(mode, "kill-raw") == 0))) {
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
  } else if (killing) {
    printf("done\n");
  } else {
    while (open("/dev/null", O_RDONLY) >= 0) {
    }
  }
  return 0;
}
