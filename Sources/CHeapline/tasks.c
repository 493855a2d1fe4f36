// A process's threads from /proc, with raw system calls (tasks.h says why).
#include "tasks.h"

#include <fcntl.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

long hl_raw6(long n, long a, long b, long c, long d, long e, long f) {
  long ret;
  register long r10 __asm__("r10") = d;
  register long r8 __asm__("r8") = e;
  register long r9 __asm__("r9") = f;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;
}

uint64_t hl_raw_monotonic_ns(void) {
  struct timespec ts = {0, 0};
  hl_raw(SYS_clock_gettime, CLOCK_MONOTONIC, &ts, 0, 0);
  return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t put_number(char *out, int32_t v) {
  char digits[16];
  int d = 0;
  do digits[d++] = (char)('0' + v % 10);
  while ((v /= 10) > 0 && d < 15);
  for (int i = 0; i < d; i++) out[i] = digits[d - 1 - i];
  return (size_t)d;
}

void hl_task_path(char *path, int32_t tgid, int32_t tid, const char *leaf) {
  size_t n = 0;
  memcpy(path, "/proc/", 6);
  n = 6 + put_number(path + 6, tgid);
  memcpy(path + n, "/task", 5);
  n += 5;
  if (tid > 0) {
    path[n++] = '/';
    n += put_number(path + n, tid);
  }
  if (leaf) {
    size_t len = strlen(leaf);
    if (n + 1 + len >= 64) len = 62 - n;
    path[n++] = '/';
    memcpy(path + n, leaf, len);
    n += len;
  }
  path[n] = 0;
}

struct hl_dirent64 {
  uint64_t ino;
  int64_t off;
  unsigned short reclen;
  unsigned char type;
  char name[];
};

int hl_tasks_list(int32_t tgid, int32_t *tids, int capacity) {
  char path[64];
  hl_task_path(path, tgid, 0, NULL);
  long fd = hl_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
  if (fd < 0) return (int)fd;
  char buf[4096];
  int count = 0;
  long got;
  while ((got = hl_raw(SYS_getdents64, fd, buf, sizeof buf, 0)) > 0) {
    for (long at = 0; at < got;) {
      const struct hl_dirent64 *e = (const struct hl_dirent64 *)(buf + at);
      at += e->reclen;
      int32_t tid = 0;
      for (const char *c = e->name; *c >= '0' && *c <= '9'; c++) tid = tid * 10 + (*c - '0');
      if (tid > 0 && count < capacity) tids[count++] = tid;
    }
  }
  hl_raw(SYS_close, fd, 0, 0, 0);
  return got < 0 ? (int)got : count;
}

long hl_task_read(int32_t tgid, int32_t tid, const char *leaf, char *text, size_t capacity) {
  char path[64];
  hl_task_path(path, tgid, tid, leaf);
  long fd = hl_raw(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
  if (fd < 0) return fd;
  long len = hl_raw(SYS_read, fd, text, capacity - 1, 0);
  hl_raw(SYS_close, fd, 0, 0, 0);
  text[len > 0 ? len : 0] = 0;
  return len;
}

char hl_task_state(int32_t tgid, int32_t tid) {
  char text[512];
  if (hl_task_read(tgid, tid, "stat", text, sizeof text) <= 0) return 0;
  // "tid (comm) S ...": the name may hold spaces and parentheses, so the state follows the
  // last ')'.
  const char *close = NULL;
  for (const char *p = text; *p; p++)
    if (*p == ')') close = p;
  return close && close[1] == ' ' ? close[2] : 0;
}
