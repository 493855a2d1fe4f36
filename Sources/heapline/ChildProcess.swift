import CHeaplineSpawn

#if canImport(Glibc)
  import Glibc
#endif

/// Runs a program as a child that shares this process's stdin, stdout and stderr, as `env`
/// and `timeout` do: signals sent to heapline reach the program, and the program dies with
/// heapline rather than living on as an orphan.
enum ChildProcess {
  struct Status {
    /// The exit status to pass on: the program's own, or 128 + the signal that ended it.
    var code: Int32
    var signal: Int32
  }

  /// Runs `executable` with `arguments` (argv, with argv[0]) and this process's environment
  /// plus `environment`, and waits for it. LD_PRELOAD is prepended to, not replaced. The
  /// program starts with the signal mask heapline was given, less `delivering` (the signals
  /// that options ask it to take).
  /// Throws a ``RecordError`` with status 126 when the program cannot be executed, 127 when it
  /// does not exist, and 125 when heapline itself fails.
  static func run(
    executable: String, arguments: [String], environment: [String: String],
    delivering signals: [Int32] = []
  ) throws -> Status {
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = mergedEnvironment(environment).map { strdup($0) } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    // Left installed after the program ends (hl_spawn_program_ended): a signal while the trace
    // is finished killed `record` with its status, not the program's
    hl_spawn_forward_signals()
    var execFailed: Int32 = 0
    let pid = hl_spawn(executable, argv, envp, signals, Int32(signals.count), &execFailed)
    guard pid > 0 else {
      let reason = String(cString: strerror(-pid))
      guard execFailed != 0 else {
        throw RecordError("cannot start a process for '\(executable)': \(reason)", status: 125)
      }
      throw RecordError("cannot run '\(executable)': \(reason)", status: -pid == ENOENT ? 127 : 126)
    }
    let status = hl_spawn_wait(pid)
    hl_spawn_program_ended()
    guard status >= 0 else {
      throw RecordError("waiting for '\(executable)': \(String(cString: strerror(-status)))")
    }
    let termSignal = status & 0x7f
    if termSignal == 0 { return Status(code: (status >> 8) & 0xff, signal: 0) }
    return Status(code: 128 + termSignal, signal: termSignal)
  }

  /// This process's environment with `environment` laid over it, as KEY=VALUE entries.
  private static func mergedEnvironment(_ environment: [String: String]) -> [String] {
    var keys: [String] = []
    var env = [String: String]()
    var cursor = environ
    while let entry = cursor.pointee {
      let text = String(cString: entry)
      if let eq = text.firstIndex(of: "=") {
        let key = String(text[..<eq])
        if env[key] == nil { keys.append(key) }
        env[key] = String(text[text.index(after: eq)...])
      }
      cursor += 1
    }
    for (key, value) in environment.sorted(by: { $0.key < $1.key }) {
      if env[key] == nil { keys.append(key) }
      if key == "LD_PRELOAD", let existing = env[key], !existing.isEmpty {
        env[key] = value + ":" + existing
      } else {
        env[key] = value
      }
    }
    return keys.map { "\($0)=\(env[$0]!)" }
  }
}
