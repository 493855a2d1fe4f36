// The seccomp filters that the program installs, and whether one would kill it for a system
// call of the shim's: then a recording ends before the filter is in place, and a leak scan
// does not run. The scan makes calls the program never makes (clone, ptrace,
// process_vm_readv, reads of /proc), on the program's thread and in a helper that inherits its
// filters; a filter that kills for one (systemd's SystemCallFilter, a sandbox's allowlist)
// killed the program in the scan at exit, with SIGSYS. A filter that fails a call with an
// error leaves the scan to its fallbacks.
//
// prctl and glibc's syscall() (for the seccomp system call, libseccomp's way) are wrapped to
// keep a copy of each filter installed through them. A filter installed another way (a system
// call instruction of the program's own) is not seen: /proc counts it, and the scan does not
// run.
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>

#include "internal.h"
#include "tasks.h"

// Room for the filters' instructions, in the library's own memory: once a filter is in place,
// mapping more might be what it forbids.
enum { HL_FILTER_ROOM = 8192, HL_FILTERS = 32 };
static struct sock_filter hl_code[HL_FILTER_ROOM];
static struct {
  uint32_t start, length;
} hl_filters[HL_FILTERS];
static _Atomic int hl_filter_count, hl_filters_lost;
static _Atomic int hl_filter_lock;

// Runs `filter` as the kernel would on `data`: classic BPF over struct seccomp_data. Returns the
// action; a program the kernel would not have taken (it checks them) is read as killing.
static uint32_t run(const struct sock_filter *code, uint32_t length,
                    const struct seccomp_data *data) {
  uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};
  for (uint32_t pc = 0; pc < length; pc++) {
    const struct sock_filter *f = &code[pc];
    uint32_t k = f->k, src = BPF_SRC(f->code) == BPF_X ? x : k;
    switch (BPF_CLASS(f->code)) {
    case BPF_LD:
      if (BPF_MODE(f->code) == BPF_ABS && k % 4 == 0 && k + 4 <= sizeof *data)
        memcpy(&a, (const char *)data + k, 4);
      else if (BPF_MODE(f->code) == BPF_IMM) a = k;
      else if (BPF_MODE(f->code) == BPF_MEM && k < BPF_MEMWORDS) a = mem[k];
      else if (BPF_MODE(f->code) == BPF_LEN) a = sizeof *data;
      else return SECCOMP_RET_KILL_PROCESS;
      break;
    case BPF_LDX:
      if (BPF_MODE(f->code) == BPF_IMM) x = k;
      else if (BPF_MODE(f->code) == BPF_MEM && k < BPF_MEMWORDS) x = mem[k];
      else if (BPF_MODE(f->code) == BPF_LEN) x = sizeof *data;
      else return SECCOMP_RET_KILL_PROCESS;
      break;
    case BPF_ST:
    case BPF_STX:
      if (k >= BPF_MEMWORDS) return SECCOMP_RET_KILL_PROCESS;
      mem[k] = BPF_CLASS(f->code) == BPF_ST ? a : x;
      break;
    case BPF_ALU:
      switch (BPF_OP(f->code)) {
      case BPF_ADD: a += src; break;
      case BPF_SUB: a -= src; break;
      case BPF_MUL: a *= src; break;
      case BPF_DIV: a = src ? a / src : 0; break;
      case BPF_MOD: a = src ? a % src : 0; break;
      case BPF_OR: a |= src; break;
      case BPF_AND: a &= src; break;
      case BPF_XOR: a ^= src; break;
      case BPF_LSH: a = src < 32 ? a << src : 0; break;
      case BPF_RSH: a = src < 32 ? a >> src : 0; break;
      case BPF_NEG: a = -a; break;
      default: return SECCOMP_RET_KILL_PROCESS;
      }
      break;
    case BPF_JMP: {
      uint32_t taken;
      switch (BPF_OP(f->code)) {
      case BPF_JA: pc += k; continue;
      case BPF_JEQ: taken = a == src; break;
      case BPF_JGT: taken = a > src; break;
      case BPF_JGE: taken = a >= src; break;
      case BPF_JSET: taken = (a & src) != 0; break;
      default: return SECCOMP_RET_KILL_PROCESS;
      }
      pc += taken ? f->jt : f->jf;
      break;
    }
    case BPF_RET: return BPF_RVAL(f->code) == BPF_A ? a : k;
    case BPF_MISC:
      if (BPF_MISCOP(f->code) == BPF_TAX) x = a;
      else a = x;
      break;
    }
  }
  return SECCOMP_RET_KILL_PROCESS;
}

// The system calls that the shim makes, with the first arguments a filter might tell apart
// them by (strace of a recording and its scan at exit). Those of a recording, made on the
// program's own threads as they allocate and free (their buffers, their stacks, the trace):
struct call {
  int nr;
  uint64_t a0, a1;
};
static const struct call hl_recording_calls[] = {
    {SYS_gettid, 0, 0},          {SYS_getpid, 0, 0},         {SYS_mmap, 0, 0},
    {SYS_munmap, 0, 0},          {SYS_mprotect, 0, 0},       {SYS_madvise, 0, 0},
    {SYS_mremap, 0, 0},          {SYS_ftruncate, 0, 0},      {SYS_openat, (uint64_t)AT_FDCWD, 0},
    {SYS_read, 0, 0},            {SYS_pread64, 0, 0},        {SYS_pwrite64, 0, 0},
    {SYS_write, 2, 0},           {SYS_close, 0, 0},          {SYS_newfstatat, 0, 0},
    {SYS_fstat, 0, 0},           {SYS_fcntl, 0, F_DUPFD_CLOEXEC},
    {SYS_fcntl, 0, F_SETFD},     {SYS_ioctl, 0, 0},          {SYS_prlimit64, 0, RLIMIT_NOFILE},
    {SYS_futex, 0, 0},           {SYS_sched_yield, 0, 0},    {SYS_clock_gettime, 0, 0},
    {SYS_clock_nanosleep, 0, 0}, {SYS_nanosleep, 0, 0},      {SYS_rt_sigprocmask, 0, 0},
    {SYS_rt_sigaction, 0, 0},    {SYS_pipe2, 0, 0},          {SYS_mincore, 0, 0},
    {SYS_readlink, 0, 0},        {SYS_getdents64, 0, 0},     {SYS_lseek, 0, 0},
    {SYS_fchmod, 0, 0},
};
// and those of a leak scan besides, made on the scanning thread and in the helper it starts:
static const struct call hl_scan_calls[] = {
    {SYS_clone, CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED, 0},
    {SYS_ptrace, PTRACE_SEIZE, 0},
    {SYS_ptrace, PTRACE_INTERRUPT, 0},
    {SYS_ptrace, PTRACE_GETREGS, 0},
    {SYS_ptrace, PTRACE_GETFPREGS, 0},
    {SYS_ptrace, PTRACE_DETACH, 0},
    {SYS_process_vm_readv, 0, 0},
    {SYS_wait4, (uint64_t)-1, 0},
    {SYS_rt_sigtimedwait, 0, 0},
    {SYS_rt_sigaction, SIGCHLD, 0},
    {SYS_prctl, PR_SET_PDEATHSIG, SIGKILL},
    {SYS_prctl, PR_SET_NAME, 0},
    {SYS_prctl, PR_SET_PTRACER, 0},
    {SYS_kill, 0, SIGKILL},
    {SYS_tgkill, 0, 0},
    {SYS_rt_tgsigqueueinfo, 0, 0},
    {SYS_getppid, 0, 0},
    {SYS_exit, 0, 0},
};

// Whether an action ends the process, or hands the call to a handler or a supervisor that the
// scan knows nothing of. An error (or a tracer's ENOSYS, when none is attached) is no harm.
static int harmful(uint32_t action) {
  switch (action & SECCOMP_RET_ACTION_FULL) {
  case SECCOMP_RET_ERRNO:
  case SECCOMP_RET_TRACE:
  case SECCOMP_RET_LOG:
  case SECCOMP_RET_ALLOW: return 0;
  default: return 1;
  }
}

// Whether the filter would kill (or trap) one of `calls`.
static int harms(const struct sock_filter *code, uint32_t length, const struct call *calls,
                 size_t count) {
  for (size_t c = 0; c < count; c++) {
    struct seccomp_data data = {.nr = calls[c].nr, .arch = AUDIT_ARCH_X86_64,
                                .args = {calls[c].a0, calls[c].a1}};
    if (harmful(run(code, length, &data))) return 1;
  }
  return 0;
}
#define HL_HARMS(code, length, calls) harms(code, length, calls, sizeof calls / sizeof calls[0])

int hl_seccomp_kills_scan(void) {
  if (atomic_load(&hl_filters_lost)) return 1;
  int count = atomic_load(&hl_filter_count);
  for (int i = 0; i < count; i++) {
    const struct sock_filter *code = &hl_code[hl_filters[i].start];
    if (HL_HARMS(code, hl_filters[i].length, hl_recording_calls) ||
        HL_HARMS(code, hl_filters[i].length, hl_scan_calls))
      return 1;
  }
  return 0;
}

int hl_seccomp_filters_seen(void) { return atomic_load(&hl_filter_count); }

// Keeps a copy of `program`, which the kernel has taken.
static void keep(const struct sock_fprog *program) {
  hl_spin_lock(&hl_filter_lock);
  int count = atomic_load(&hl_filter_count);
  uint32_t start = count ? hl_filters[count - 1].start + hl_filters[count - 1].length : 0;
  if (count < HL_FILTERS && program->len <= HL_FILTER_ROOM - start) {
    memcpy(&hl_code[start], program->filter, program->len * sizeof *program->filter);
    hl_filters[count].start = start;
    hl_filters[count].length = program->len;
    atomic_store(&hl_filter_count, count + 1);
  } else {
    atomic_store(&hl_filters_lost, 1);  // no room: the scan cannot tell, so it does not run
  }
  hl_spin_unlock(&hl_filter_lock);
}

// System call `nr`, which installs `filter` or strict mode when they are given, as glibc's
// wrappers make it: -1 and errno on failure. A filter that would kill the program for what the
// shim does as it records ends the recording first, while the shim may still write: the program
// went on to die of SIGSYS at its next allocation (strict mode allows read, write and exit
// alone). A filter in place is kept, to run on the leak scan's calls.
static long installing(long nr, long a, long b, long c, long d, long e,
                       const struct sock_fprog *filter, int strict) {
  if (strict || (filter && HL_HARMS(filter->filter, filter->len, hl_recording_calls)))
    hl_end_for_seccomp();
  long r = hl_raw6(nr, a, b, c, d, e, 0);
  if (r < 0 && r > -4096) {
    errno = (int)-r;
    return -1;
  }
  if (filter) keep(filter);
  return r;
}

#ifdef HL_PRELOAD
// glibc's syscall(), in assembly as glibc's is, with no frame of its own: a vfork made through
// it returns in the child through the parent's stack, which a frame here would leave broken.
// The seccomp system call (libseccomp's way to install a filter, with TSYNC for every thread)
// goes to hl_seccomp_syscall first, as prctl's does above.
_Static_assert(SYS_seccomp == 317, "the number in the assembly below");
__asm__(".text\n"
        ".globl syscall\n"
        ".type syscall, @function\n"
        "syscall:\n"
        "  .cfi_startproc\n"
        "  cmp $317, %rdi\n"
        "  je hl_seccomp_syscall\n"
        "  mov %rdi, %rax\n"
        "  mov %rsi, %rdi\n"
        "  mov %rdx, %rsi\n"
        "  mov %rcx, %rdx\n"
        "  mov %r8, %r10\n"
        "  mov %r9, %r8\n"
        "  mov 8(%rsp), %r9\n"
        "  syscall\n"
        "  cmp $-4095, %rax\n"
        "  jae 1f\n"
        "  ret\n"
        "1:\n"
        "  neg %rax\n"
        "  push %rax\n"
        "  .cfi_adjust_cfa_offset 8\n"
        "  call __errno_location@PLT\n"
        "  pop %rcx\n"
        "  .cfi_adjust_cfa_offset -8\n"
        "  mov %ecx, (%rax)\n"
        "  mov $-1, %rax\n"
        "  ret\n"
        "  .cfi_endproc\n"
        ".size syscall, .-syscall\n");

__attribute__((visibility("hidden"), used)) long hl_seccomp_syscall(long nr, unsigned long op,
                                                                   unsigned long flags,
                                                                   void *argument) {
  const struct sock_fprog *filter = op == SECCOMP_SET_MODE_FILTER ? argument : NULL;
  return installing(nr, (long)op, (long)flags, (long)argument, 0, 0, filter,
                    op == SECCOMP_SET_MODE_STRICT);
}
#endif

// glibc's prctl is the system call itself, with five arguments whatever the option.
int prctl(int option, ...) {
  va_list ap;
  va_start(ap, option);
  unsigned long a[4];
  for (int i = 0; i < 4; i++) a[i] = va_arg(ap, unsigned long);
  va_end(ap);
  int seccomp = option == PR_SET_SECCOMP;
  const void *filter = seccomp && a[0] == SECCOMP_MODE_FILTER ? (const void *)a[1] : NULL;
  return (int)installing(SYS_prctl, option, (long)a[0], (long)a[1], (long)a[2], (long)a[3], filter,
                         seccomp && a[0] == SECCOMP_MODE_STRICT);
}
