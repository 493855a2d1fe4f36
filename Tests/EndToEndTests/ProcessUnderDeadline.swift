import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process that a test starts, watches and signals while it runs, unlike
/// `Harness.run`, which waits for the end. It never outlives the test: `kill()` ends it. Spawned
/// and reaped with posix_spawn and waitpid, which need no run loop.
final class ProcessUnderDeadline {
  private let pid: pid_t
  private var status: Int32?

  /// Runs `executable` with its stdin and stdout on /dev/null, and its stderr into the file
  /// `stderr` (or /dev/null).
  init(_ executable: String, _ arguments: [String], stderr: String = "/dev/null") throws {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, stderr, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    var child = pid_t()
    let err = posix_spawn(&child, executable, &actions, nil, argv, environ)
    guard err == 0 else {
      throw HarnessError("cannot run \(executable): \(String(cString: strerror(err)))")
    }
    pid = child
  }

  /// Its exit status (128 + N for signal N) once it has ended, or nil when it is still running
  /// after `seconds`.
  func wait(seconds: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(seconds)
    while status == nil {
      var raw: Int32 = 0
      if waitpid(pid, &raw, WNOHANG) == pid {
        status = raw & 0x7f == 0 ? (raw >> 8) & 0xff : 128 + (raw & 0x7f)
      } else if Date() >= deadline {
        return nil
      } else {
        usleep(2_000)
      }
    }
    return status
  }

  func kill() {
    guard status == nil else { return }
    Glibc.kill(pid, SIGKILL)
    var raw: Int32 = 0
    _ = waitpid(pid, &raw, 0)
    status = 128 + SIGKILL
  }
}

/// What /proc says about a process.
enum Proc {
  struct Stat {
    var name: String
    var state: Character
    /// Clock ticks after boot: with the pid, it names one process even when pids are reused.
    var startTime: UInt64
  }

  static func stat(_ pid: pid_t) -> Stat? {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let open = text.firstIndex(of: "("), let close = text.lastIndex(of: ")")
    else { return nil }
    // After the name: state, ppid, ... with the start time the 20th field.
    let fields = text[text.index(close, offsetBy: 2)...].split(separator: " ")
    guard fields.count > 19, let state = fields[0].first, let start = UInt64(fields[19]) else {
      return nil
    }
    return Stat(
      name: String(text[text.index(after: open)..<close]), state: state, startTime: start)
  }

  /// The pid that a program wrote into `path`, once it has.
  static func pid(inFile path: String) -> pid_t? {
    (try? String(contentsOfFile: path, encoding: .utf8)).flatMap {
      pid_t($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
  }

  /// The process that traces one of `pid`'s threads, if one does.
  static func tracer(ofAnyThreadOf pid: pid_t) -> pid_t? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    for task in tasks {
      guard
        let status = try? String(
          contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
      else { continue }
      for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
        if let tracer = pid_t(line.dropFirst(10).trimmingCharacters(in: .whitespaces)), tracer != 0
        {
          return tracer
        }
      }
    }
    return nil
  }
}
