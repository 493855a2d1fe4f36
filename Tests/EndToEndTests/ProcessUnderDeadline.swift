import Foundation

#if canImport(Glibc)
  import Glibc
#endif

/// A child process that a test starts, watches and signals while it runs, unlike
/// `Harness.run`, which waits for the end. It never outlives the test: `kill()` ends it.
final class ProcessUnderDeadline {
  private let process = Process()

  init(_ executable: String, _ arguments: [String]) throws {
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    process.standardInput = FileHandle.nullDevice
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
  }

  /// Its exit status once it has ended, or nil when it is still running after `seconds`.
  func wait(seconds: Double) -> Int32? {
    let deadline = Date().addingTimeInterval(seconds)
    while process.isRunning {
      if Date() >= deadline { return nil }
      usleep(2_000)
    }
    return process.terminationStatus
  }

  func kill() {
    if process.isRunning { Glibc.kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
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

  /// The process that traces one of `pid`'s threads, if one does.
  static func tracer(ofAnyThreadOf pid: pid_t) -> pid_t? {
    let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    for task in tasks {
      guard let status = try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/status", encoding: .utf8)
      else { continue }
      for line in status.split(separator: "\n") where line.hasPrefix("TracerPid:") {
        if let tracer = pid_t(line.dropFirst(10).trimmingCharacters(in: .whitespaces)), tracer != 0 {
          return tracer
        }
      }
    }
    return nil
  }
}
