import Foundation

/// Runs the built `heapline` and the C fixture programs for the end-to-end tests.
enum Harness {
  struct Result {
    var status: Int32
    var stdout: String
    var stderr: String
  }

  /// How long a child may run unless a test says otherwise: generous, since the machine is
  /// shared and a debug build under the shim is slow, but finite, so a hang fails its test.
  static let defaultTimeout: Double = 300

  /// `heapline`, built by `swift build` beside the test binary; the preload library that
  /// Tools/build-preload.sh made is there too.
  static var heapline: String {
    let exe = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
    return exe.deletingLastPathComponent().appendingPathComponent("heapline").path
  }

  static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
    .appendingPathComponent("Fixtures")

  /// A fresh directory for one test's files.
  static func temporaryDirectory() throws -> URL {
    let url = FileManager.default.temporaryDirectory.appendingPathComponent(
      "heapline-e2e-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
  }

  /// Compiles Fixtures/NAME.c with debug info (and `flags`) into `directory` and returns the
  /// program's path.
  static func fixture(_ name: String, in directory: URL, flags: [String] = []) throws -> String {
    let output = directory.appendingPathComponent(name).path
    let source = fixtures.appendingPathComponent("\(name).c").path
    let result = try run(
      "/usr/bin/env", ["cc", "-g", "-O0"] + flags + ["-o", output, source, "-lpthread"])
    guard result.status == 0 else { throw HarnessError("cc failed: \(result.stderr)") }
    return output
  }

  /// Compiles Fixtures/NAME.c with debug info into the shared library `libNAME.so` in
  /// `directory`, and Fixtures/PROGRAM.c into a program linked with it (found through its
  /// rpath); returns the program's and the library's paths.
  static func fixture(
    _ program: String, linking name: String, in directory: URL, libraryFlags: [String] = []
  ) throws -> (program: String, library: String) {
    let library = directory.appendingPathComponent("lib\(name).so").path
    let built = try run(
      "/usr/bin/env",
      [
        "cc", "-g", "-shared", "-fPIC", "-o", library,
        fixtures.appendingPathComponent("\(name).c").path,
      ] + libraryFlags)
    guard built.status == 0 else { throw HarnessError("cc failed: \(built.stderr)") }
    let linked = try fixture(
      program, in: directory,
      flags: [
        "-Wl,--no-as-needed", "-L", directory.path, "-l\(name)",
        "-Wl,-rpath," + directory.path,
      ])
    return (linked, library)
  }

  /// Runs `heapline` with `arguments`.
  static func heapline(
    _ arguments: [String], stdin: String = "", environment: [String: String] = [:],
    timeout: Double = defaultTimeout
  ) throws -> Result {
    try run(heapline, arguments, stdin: stdin, environment: environment, timeout: timeout)
  }

  /// Runs `executable` in a process group of its own, with this process's environment plus
  /// `environment`. When it outlives `timeout` seconds, its threads' stacks are taken with gdb,
  /// its whole group is killed, and a ``HarnessError`` carrying the stacks fails the test.
  static func run(
    _ executable: String, _ arguments: [String], stdin: String = "",
    environment: [String: String] = [:], timeout: Double = defaultTimeout
  ) throws -> Result {
    var env = ProcessInfo.processInfo.environment
    env.merge(environment) { $1 }
    let child = try SpawnedChild(executable: executable, arguments: arguments, environment: env)
    let collected = child.collect(stdin: Data(stdin.utf8))
    let deadline = Date(timeIntervalSinceNow: timeout)
    let command = "\(executable) \(arguments.joined(separator: " ")) (pid \(child.pid))"
    guard let status = child.wait(seconds: timeout) else {
      let stacks = groupStacks(of: child.pid)
      child.killGroup()
      _ = child.wait(seconds: nil)
      _ = collected.wait(until: Date(timeIntervalSinceNow: 10))
      throw HarnessError(
        "\(command) timed out after \(timeout) s and was killed with its process group; "
          + "the threads of the group's processes were at:\n\(stacks)")
    }
    guard let output = collected.wait(until: deadline) else {
      child.killGroup()
      _ = collected.wait(until: Date(timeIntervalSinceNow: 10))
      throw HarnessError(
        "\(command) exited with status \(status), but a process it started still held its "
          + "stdout or stderr after \(timeout) s; its process group was killed")
    }
    return Result(
      status: status, stdout: String(decoding: output.stdout, as: UTF8.self),
      stderr: String(decoding: output.stderr, as: UTF8.self))
  }

  /// The state letter of `pid` in /proc ("Z" for a zombie), or nil when it no longer exists.
  static func processState(_ pid: pid_t) -> String? {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = stat.lastIndex(of: ")")
    else { return nil }
    return stat[stat.index(close, offsetBy: 2)...].split(separator: " ").first.map(String.init)
  }

  /// Whether `pid` has ended (gone, or a zombie that init has yet to reap) within `seconds`:
  /// a process killed a moment ago may still be on its way out.
  static func hasEnded(_ pid: pid_t, within seconds: Double = 60) -> Bool {
    let deadline = Date(timeIntervalSinceNow: seconds)
    repeat {
      let state = processState(pid)
      if state == nil || state == "Z" || state == "X" { return true }
      usleep(10_000)
    } while Date() < deadline
    return false
  }

  /// The processes of process group `group` (a program that `heapline record` runs is in
  /// heapline's group, and is where a hang usually is).
  static func groupMembers(_ group: pid_t) -> [pid_t] {
    let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
    return entries.compactMap { pid_t($0) }.sorted().filter { pid in
      guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
      else { return false }
      // After the command name: state, parent, process group.
      let fields = stat[stat.index(close, offsetBy: 2)...].split(separator: " ")
      return fields.count > 2 && pid_t(fields[2]) == group
    }
  }

  /// The stacks of every process in `group`, each under a line that names it.
  static func groupStacks(of group: pid_t) -> String {
    groupMembers(group).map { pid in
      let name = (try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "?\n"
      return "── process \(pid) (\(name.trimmingCharacters(in: .newlines))) ──\n"
        + threadStacks(of: pid)
    }.joined(separator: "\n")
  }

  /// Every thread's backtrace in `pid`, from gdb when it is installed (with a deadline of its
  /// own, and no stacks of its own when it hangs).
  static func threadStacks(of pid: pid_t) -> String {
    let gdb = "/usr/bin/gdb"
    guard FileManager.default.isExecutableFile(atPath: gdb) else {
      return "(no stacks: gdb is not installed)"
    }
    do {
      let child = try SpawnedChild(
        executable: gdb,
        arguments: ["-nx", "-batch", "-p", String(pid), "-ex", "thread apply all bt"],
        environment: ProcessInfo.processInfo.environment)
      let collected = child.collect(stdin: Data())
      let deadline = Date(timeIntervalSinceNow: 60)
      guard child.wait(seconds: 60) != nil, let output = collected.wait(until: deadline) else {
        child.killGroup()
        _ = child.wait(seconds: nil)
        return "(no stacks: gdb took more than 60 s)"
      }
      return String(decoding: output.stdout + output.stderr, as: UTF8.self)
    } catch {
      return "(no stacks: \(error))"
    }
  }
}

struct HarnessError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}
