// How `heapline record` starts the program and stays its parent: in C, because the child
// between fork and exec may only make async-signal-safe calls, and a signal handler too.
#ifndef HEAPLINE_SPAWN_H
#define HEAPLINE_SPAWN_H

#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Starts `path` with `argv` and `envp` and returns its pid, or -errno when it could not be
/// started: `*exec_failed` is then 1 when the program could not be executed (the child is
/// reaped already), and 0 when this process could not make the child (no pipe, no process).
/// The program starts with the signal mask kept by `hl_spawn_keep_signal_mask` (none blocked
/// without it), less the `delivered` signals of `deliver`, and with the dispositions this
/// process had before `hl_spawn_forward_signals`; it is killed (SIGKILL) if this thread dies
/// first, so it never lives on as an orphan.
///
/// Call `hl_spawn_forward_signals` first: every signal that a process sends to this one and
/// that would end it (SIGINT, SIGTERM, SIGUSR1, the realtime ones...), and SIGTSTP, are then
/// passed on to the program. Those that the terminal sends go to the program's process group,
/// the program included, and are not passed on again.
pid_t hl_spawn(const char *path, char *const argv[], char *const envp[], const int *deliver,
               int delivered, int *exec_failed);

/// Keeps this thread's signal mask for the programs that `hl_spawn` starts: call it first
/// thing in main, when the mask is still the one this process was started with.
void hl_spawn_keep_signal_mask(void);

/// Installs the forwarding handlers, for good: the program that `hl_spawn` starts gets the
/// dispositions they replaced.
void hl_spawn_forward_signals(void);

/// After the program has ended: the forwarded signals are ignored from then on, so that one
/// that comes while the trace is finished does not replace the program's status; but the
/// terminal's (^C) still end this process.
void hl_spawn_program_ended(void);

/// Ignores SIGXFSZ in this process, so that a write past the file size limit (`ulimit -f`)
/// fails with EFBIG, which the caller reports, rather than killing it with no word. A program
/// that `hl_spawn` starts gets the disposition this process had before.
void hl_spawn_ignore_file_size_signal(void);

/// Ignores SIGPIPE in this process, so that a notice written to a closed pipe fails rather than
/// ending `record` with SIGPIPE in place of the program's status. A program that `hl_spawn`
/// starts gets the disposition this process had before.
void hl_spawn_ignore_pipe_signal(void);

/// Raises this process's soft limit on descriptors to `floor` (or to the hard limit, when that
/// is lower) if it is below: the commands need a few of their own, and Foundation's `Process`
/// traps when it finds none. A program that `hl_spawn` starts gets the limit this process had.
void hl_spawn_raise_file_limit(unsigned long floor);
/// Waits for `pid` (retrying when a signal interrupts) and returns its raw wait status, or
/// -errno. While the program is stopped, this process stops too, and continues it after.
int hl_spawn_wait(pid_t pid);

#ifdef __cplusplus
}
#endif

#endif
