#if canImport(Glibc)
  import Glibc
#endif

/// Runs a program as a child that shares this process's stdin, stdout and stderr.
enum ChildProcess {
  struct Status {
    /// The exit status to pass on: the program's own, or 128 + the signal that ended it.
    var code: Int32
    var signal: Int32
  }

  /// Runs `executable` with `arguments` (argv, with argv[0]) and this process's environment
  /// plus `environment`, and waits for it. LD_PRELOAD is prepended to, not replaced.
  static func run(executable: String, arguments: [String], environment: [String: String]) throws
    -> Status
  {
    var env = [String: String]()
    var cursor = environ
    while let entry = cursor.pointee {
      let text = String(cString: entry)
      if let eq = text.firstIndex(of: "=") {
        env[String(text[..<eq])] = String(text[text.index(after: eq)...])
      }
      cursor += 1
    }
    for (key, value) in environment {
      if key == "LD_PRELOAD", let existing = env[key], !existing.isEmpty {
        env[key] = value + ":" + existing
      } else {
        env[key] = value
      }
    }
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = env.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv + envp { free(pointer) }
    }
    // Like a shell running a foreground job: ^C and ^\ go to the program; heapline waits for it
    // and still says where the trace went.
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var defaults = sigset_t()
    sigemptyset(&defaults)
    sigaddset(&defaults, SIGINT)
    sigaddset(&defaults, SIGQUIT)
    posix_spawnattr_setsigdefault(&attributes, &defaults)
    // A program starts with no signal blocked, whatever thread of ours starts it (a test
    // runner's worker blocks them all): the mark and warning signals must reach it.
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    posix_spawnattr_setsigmask(&attributes, &unblocked)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK))
    let oldInt = signal(SIGINT, SIG_IGN)
    let oldQuit = signal(SIGQUIT, SIG_IGN)
    defer {
      signal(SIGINT, oldInt)
      signal(SIGQUIT, oldQuit)
    }
    var pid = pid_t()
    let err = posix_spawn(&pid, executable, nil, &attributes, argv, envp)
    guard err == 0 else {
      throw RecordError("cannot run '\(executable)': \(String(cString: strerror(err)))")
    }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
      guard errno == EINTR else {
        throw RecordError("waiting for '\(executable)': \(String(cString: strerror(errno)))")
      }
    }
    let termSignal = status & 0x7f
    if termSignal == 0 { return Status(code: (status >> 8) & 0xff, signal: 0) }
    return Status(code: 128 + termSignal, signal: termSignal)
  }
}
