// exec: the process becomes another program, and stays the one that `heapline record` traces.
// The environment was scrubbed of the shim's settings when it loaded (options.c), so each exec
// function is wrapped: it finishes the trace (end reason 5), moves it aside as TRACE.1, TRACE.2…
// (the last program keeps the path asked for), and gives the new program the settings back. If
// the exec fails, the recording starts again at the same path, so nothing is lost either way.
// Only the traced process does this: a fork child (or a vfork child, which shares our memory but
// not our pid) execs untouched.
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/xattr.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

extern char **environ;
extern void *__libc_malloc(size_t);
extern char hl_trace_path[];     // control.c: the path this recording writes
extern pid_t hl_recording_pid;   // control.c: the traced process
int hl_end_for_exec(void);       // control.c: 1 when a recording was ended
void hl_restart_after_exec(void);

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execvpe_fn)(const char *, char *const[], char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);
typedef int (*execveat_fn)(int, const char *, char *const[], char *const[], int);

static void *real(const char *name) { return dlsym(RTLD_NEXT, name); }

// `envp` with the shim's settings and the preload library added; NULL when not recording.
static char **traced_environment(char *const envp[]) {
  size_t count = 0;
  while (envp && envp[count]) count++;
  char **out = __libc_malloc((count + 24) * sizeof *out);
  if (!out) return NULL;
  size_t n = 0, preload_at = SIZE_MAX;
  const char *preload = hl_option("HEAPLINE_PRELOAD");
  const char *old_preload = NULL;
  // The program's own variables stay, HEAPLINE_* ones too (only the shim's settings go, to be
  // given again below), and LD_PRELOAD keeps its place: every HEAPLINE_ variable went, and
  // LD_PRELOAD moved to the end.
  for (size_t i = 0; i < count; i++) {
    if (strncmp(envp[i], "LD_PRELOAD=", 11) == 0) {
      old_preload = envp[i] + 11;
      preload_at = n++;
    } else if (!hl_is_setting(envp[i])) {
      out[n++] = envp[i];
    }
  }
  if (preload_at != SIZE_MAX) out[preload_at] = (char *)old_preload - 11;
  if (preload) {
    size_t len = 11 + strlen(preload) + (old_preload ? 1 + strlen(old_preload) : 0) + 1;
    char *entry = __libc_malloc(len);
    if (entry) {
      snprintf(entry, len, "LD_PRELOAD=%s%s%s", preload, old_preload ? ":" : "",
               old_preload ? old_preload : "");
      if (preload_at != SIZE_MAX) out[preload_at] = entry;
      else out[n++] = entry;
    }
    // What the next program's own LD_PRELOAD is, for its shim to put back (options.c)
    len = sizeof "HEAPLINE_PRELOAD_WAS=+" + (old_preload ? strlen(old_preload) : 0);
    if ((entry = __libc_malloc(len))) {
      snprintf(entry, len, "HEAPLINE_PRELOAD_WAS=%s%s", old_preload ? "+" : "-",
               old_preload ? old_preload : "");
      out[n++] = entry;
    }
  }
  n += hl_options_export(out + n, 20);
  out[n] = NULL;
  return out;
}

// Whether the program an exec starts will load the shim again, read from its file: it will
// not when no dynamic loader runs it (a static program: no PT_INTERP), or when the loader runs
// it in secure mode, which ignores LD_PRELOAD (below). Such a program is given the environment
// the program asked for: it saw the shim's settings and preload, and a set-user-ID one every
// HEAPLINE_ variable. A script is judged by its interpreter. When the file cannot be read, as
// before: the settings go.
// Opened without blocking and without taking a terminal: the path an exec names may be a FIFO,
// which open would wait on for a writer, and only a regular file is read.
enum { HL_SCRIPT_DEPTH = 4, HL_PROBE_FLAGS = O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY };
static int loads_shim(int fd, int depth) {
  struct stat st;
  unsigned char head[256];
  ssize_t got = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) ? pread(fd, head, sizeof head, 0) : -1;
  if (got < 0) return 1;
  if (got > 2 && head[0] == '#' && head[1] == '!') {  // Linux ignores a script's set-ID bits
    char interpreter[sizeof head];
    size_t i = 2, n = 0;
    while (i < (size_t)got && (head[i] == ' ' || head[i] == '\t')) i++;
    while (i < (size_t)got && head[i] != ' ' && head[i] != '\t' && head[i] != '\n')
      interpreter[n++] = (char)head[i++];
    interpreter[n] = 0;
    int next = depth < HL_SCRIPT_DEPTH && n ? open(interpreter, HL_PROBE_FLAGS) : -1;
    if (next < 0) return 1;
    int loads = loads_shim(next, depth + 1);
    close(next);
    return loads;
  }
  // Set-user-ID, set-group-ID (only with group execute, as Linux applies it), or file
  // capabilities, which make secure mode only for a user other than root (root's do not grow).
  if (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
      ((st.st_mode & S_ISGID) && (st.st_mode & S_IXGRP) && st.st_gid != getgid()) ||
      (getuid() != 0 && fgetxattr(fd, "security.capability", NULL, 0) > 0))
    return 0;
  const ElfW(Ehdr) *e = (const ElfW(Ehdr) *)head;
  if ((size_t)got < sizeof *e || memcmp(e->e_ident, ELFMAG, SELFMAG) != 0 ||
      e->e_phentsize != sizeof(ElfW(Phdr)))
    return 1;  // no ELF file of this machine's: the exec fails, or a shell runs it
  ElfW(Phdr) ph[16];
  for (unsigned i = 0; i < e->e_phnum; i += 16) {
    unsigned n = e->e_phnum - i < 16 ? e->e_phnum - i : 16;
    if (pread(fd, ph, n * sizeof *ph, (off_t)(e->e_phoff + i * sizeof *ph)) !=
        (ssize_t)(n * sizeof *ph))
      return 1;
    for (unsigned k = 0; k < n; k++)
      if (ph[k].p_type == PT_INTERP) return 1;
  }
  return 0;
}

// The file `path` names as execvpe finds it: through PATH when it has no slash.
static int open_program(const char *path, int search) {
  if (!search || strchr(path, '/')) return open(path, HL_PROBE_FLAGS);
  const char *dirs = "/bin:/usr/bin";  // environ read directly: bash has a getenv of its own
  for (char **entry = environ; entry && *entry; entry++)
    if (strncmp(*entry, "PATH=", 5) == 0) dirs = *entry + 5;
  char full[4096];
  for (const char *d = dirs;; d = strchr(d, ':') + 1) {
    size_t len = strchrnul(d, ':') - d;
    int n = snprintf(full, sizeof full, "%.*s/%s", len ? (int)len : 1, len ? d : ".", path);
    // One that may be run but not read (mode 711) is execvpe's choice too: not "no file".
    if (n < (int)sizeof full && access(full, X_OK) == 0) return open(full, HL_PROBE_FLAGS);
    if (!strchr(d, ':')) {
      errno = ENOENT;  // found nowhere: execvpe fails too
      return -1;
    }
  }
}

// -1 when the program's file is not there, so that the exec will fail: a shell that looks for
// its program through PATH with execve, one directory after another, split the trace at every
// miss (an empty TRACE.N for each directory before git's).
static int program_loads_shim(int fd, int owned) {
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? -1 : 1;
  int loads = loads_shim(fd, 0);
  if (owned) close(fd);
  return loads;
}

// One exec of the traced process at a time, in the order they came: a thread whose exec comes
// while another's is in flight waits until that one fails (the recording has begun again) or
// succeeds (the process is the next program, and this thread is gone). Two at once, one of
// them failing, found the recording ended by the other and not begun again yet: the exec that
// succeeded ran with the environment scrubbed, and the next program went untraced. A signal
// handler's exec inside its thread's own, or while its thread waits for its turn, does not
// wait: its turn would come after the one its thread cannot take until the handler returns.
static _Atomic uint32_t hl_exec_next, hl_exec_serving;
static _Atomic int32_t hl_exec_owner;
static __thread int hl_exec_waiting;

static int exec_turn(void) {
  int32_t self = (int32_t)syscall(SYS_gettid);
  if (hl_exec_waiting || atomic_load(&hl_exec_owner) == self) return 0;
  hl_exec_waiting = 1;
  uint32_t ticket = atomic_fetch_add(&hl_exec_next, 1);
  while (atomic_load(&hl_exec_serving) != ticket) {
    struct timespec pause = {0, 50 * 1000};
    nanosleep(&pause, NULL);
  }
  atomic_store(&hl_exec_owner, self);
  hl_exec_waiting = 0;
  return 1;
}

static void exec_turn_over(void) {
  atomic_store(&hl_exec_owner, 0);
  atomic_fetch_add(&hl_exec_serving, 1);
}

// Runs `call` with the traced environment when this is the traced process and its program's
// file is there (`probe`: program_loads_shim). An exec is no cancellation point, and the
// wrapper's own work (the probe's open, the wait for its turn, the trace's end) must not become
// one: a thread cancelled there left its turn taken, or the trace's locks held.
#define HL_EXEC(envp, probe, call_with_env)                                               \
  do {                                                                                    \
    int mine = getpid() == hl_recording_pid; /* never a vfork child: its thread's parent's */ \
    int held = mine ? hl_cancel_hold() : PTHREAD_CANCEL_DISABLE;                          \
    hl_tls.guard++;                                                                       \
    int loads = 1;                                                                        \
    int traced = mine && (loads = (probe)) >= 0;                                          \
    int turn = traced && exec_turn();                                                     \
    int ended = traced && hl_end_for_exec();                                              \
    char **env = ended && loads ? traced_environment(envp) : NULL;                        \
    char *const *use = env ? env : (envp);                                                \
    hl_tls.guard--;                                                                       \
    int result = (call_with_env);                                                         \
    int saved = errno;                                                                    \
    if (ended) hl_restart_after_exec();                                                   \
    if (turn) exec_turn_over();                                                           \
    hl_cancel_release(held);                                                              \
    errno = saved;                                                                        \
    return result;                                                                        \
  } while (0)

int execve(const char *path, char *const argv[], char *const envp[]) {
  static execve_fn next;
  if (!next) next = (execve_fn)real("execve");
  HL_EXEC(envp, program_loads_shim(open_program(path, 0), 1), next(path, argv, use));
}

int execvpe(const char *file, char *const argv[], char *const envp[]) {
  static execvpe_fn next;
  if (!next) next = (execvpe_fn)real("execvpe");
  HL_EXEC(envp, program_loads_shim(open_program(file, 1), 1), next(file, argv, use));
}

int fexecve(int fd, char *const argv[], char *const envp[]) {
  static fexecve_fn next;
  if (!next) next = (fexecve_fn)real("fexecve");
  HL_EXEC(envp, program_loads_shim(fd, 0), next(fd, argv, use));
}

int execveat(int dirfd, const char *path, char *const argv[], char *const envp[], int flags) {
  static execveat_fn next;
  if (!next) next = (execveat_fn)real("execveat");
  HL_EXEC(envp,
          (flags & AT_EMPTY_PATH) && !*path
              ? program_loads_shim(dirfd, 0)
              : program_loads_shim(openat(dirfd, path, HL_PROBE_FLAGS), 1),
          next(dirfd, path, argv, use, flags));
}

int execv(const char *path, char *const argv[]) { return execve(path, argv, environ); }

int execvp(const char *file, char *const argv[]) { return execvpe(file, argv, environ); }

// The list forms gather their arguments into an array on this stack.
#define HL_GATHER(first, argv)                     \
  va_list ap;                                      \
  size_t argc = 1;                                 \
  va_start(ap, first);                             \
  while (va_arg(ap, char *)) argc++;               \
  va_end(ap);                                      \
  char *argv[argc + 1];                            \
  argv[0] = (char *)(first);                       \
  va_start(ap, first);                             \
  for (size_t i = 1; i <= argc; i++) argv[i] = va_arg(ap, char *);

int execl(const char *path, const char *arg, ...) {
  HL_GATHER(arg, argv);
  va_end(ap);
  return execve(path, argv, environ);
}

int execlp(const char *file, const char *arg, ...) {
  HL_GATHER(arg, argv);
  va_end(ap);
  return execvpe(file, argv, environ);
}

int execle(const char *path, const char *arg, ...) {
  HL_GATHER(arg, argv);
  char *const *envp = va_arg(ap, char *const *);
  va_end(ap);
  return execve(path, argv, envp);
}
