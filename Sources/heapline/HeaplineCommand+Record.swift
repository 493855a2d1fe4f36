import ArgumentParser
import CHeaplineSpawn
import HeaplineAnalysis
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

extension HeaplineCommand {
  /// `heapline record`: runs a program with the shim preloaded and writes its trace.
  struct Record: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Run a program and record its allocations into a trace file.",
      discussion: """
        The program's stdin, stdout and stderr pass through, and heapline exits with the \
        program's exit status (128 + N when a signal N ended it). Only the program itself is \
        traced, not the programs it starts. SIGINT, SIGTERM, SIGHUP and SIGQUIT sent to \
        heapline are passed on to the program, and the program is killed if heapline is.

        Exit status, as env and timeout have it: 64 for a usage error, 125 when record itself \
        fails (the trace cannot be written, or a write failed during the run, which leaves the \
        trace cut short), 126 when the program cannot be executed, 127 when it is not found.
        """)

    @Option(
      name: .shortAndLong,
      help: ArgumentHelp(
        "The trace file (default: heapline.PROGRAM.PID.trace). An existing trace is replaced; "
          + "another file only with --force.", valueName: "file"))
    var output: String?

    @Flag(help: "Replace the output file even when it is not a trace.")
    var force = false

    @Flag(
      inversion: .prefixedNo,
      help: ArgumentHelp(
        "Store the frames' symbols in the trace when the program ends: reports stay right"
          + " after a rebuild."))
    var symbols = true

    @Option(parsing: .unconditional, help: "The maximum number of frames in a stack (1 to 256).")
    var depth: Int = 64

    @Option(parsing: .unconditional, help: "Write a mark (a generation boundary) every SECONDS.")
    var markEvery: Double?

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "The signal that writes a mark when sent to the program (none by default: the program's "
          + "signals stay its own unless asked; SIGUSR2 is 12).",
        valueName: "signal-number"))
    var markSignal: Int32 = 0

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "Sample allocations: one every BYTES allocated on average, with its stack; every call is"
          + " still counted. Figures per stack and category are then estimates. No leak scan.",
        valueName: "bytes"))
    var sampleBytes: UInt64?

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "Start a new, complete trace file every SECONDS (1 or more): for -o server.trace, "
          + "server.0001-20261123T221500Z.trace, server.0002-….trace, … (a sequence number, "
          + "then the file's start in UTC). Each file holds the blocks live when it began.",
        valueName: "seconds"))
    var rotate: Int?

    @OptionGroup(title: "Memory warnings and budget")
    var memory: MemoryPressureOptions

    @OptionGroup(title: "Leak scans")
    var leakScans: LeakScanOptions

    @Argument(parsing: .captureForPassthrough, help: "The program and its arguments, after --.")
    var command: [String] = []

    mutating func validate() throws {
      try TraceInput.checkOutput(output)
      // The program's arguments pass through untouched, so what comes before `--` that the
      // parser did not take is ours to read: help, or an option that does not exist.
      if let first = command.first, first != "--", first.hasPrefix("-") {
        if first == "-h" || first == "--help" { throw CleanExit.helpRequest(self) }
        throw ValidationError("Unknown option '\(first)'")
      }
      if command.first == "--" { command.removeFirst() }
      guard let program = command.first, !program.isEmpty else {
        throw ValidationError("no program given: heapline record [-o FILE] -- PROGRAM [ARGS...]")
      }
      guard (1...256).contains(depth) else {
        throw ValidationError("--depth must be from 1 to 256, not \(depth)")
      }
      if let every = markEvery, !(every >= 0.01 && every < 1e6) {
        throw ValidationError("--mark-every must be a number of seconds from 0.01, not \(every)")
      }
      if output == "-" {
        throw ValidationError("a trace is binary and cannot go to standard output: give -o FILE")
      }
      try SignalOption.check(markSignal, option: "--mark-signal")
      if let seconds = rotate, !(1...(1 << 30)).contains(seconds) {
        throw ValidationError("--rotate must be a whole number of seconds from 1, not \(seconds)")
      }
      if let bytes = sampleBytes {
        guard (1...(1 << 40)).contains(bytes) else {
          throw ValidationError("--sample-bytes must be from 1 to 2^40, not \(bytes)")
        }
        if leakScans.isAsked {
          throw ValidationError(
            "--sample-bytes cannot be combined with a leak scan (--leaks, --leaks-every, --graph,"
              + " --leaks-signal): a scan needs every live block, and sampling keeps few")
        }
      }
      // One signal, one meaning
      let chosen = [
        ("--mark-signal", markSignal), ("--warn-signal", memory.warnSignal),
        ("--leaks-signal", leakScans.leaksSignal),
      ].filter { $0.1 != 0 }
      for (i, first) in chosen.enumerated() {
        for second in chosen[(i + 1)...] where first.1 == second.1 {
          throw ValidationError("\(first.0) and \(second.0) cannot both be signal \(first.1)")
        }
      }
    }

    func run() throws {
      // Its notices on a closed pipe (`2>&1 | grep -q`) must not replace the program's status
      hl_spawn_ignore_pipe_signal()
      let program = command[0]
      let executable = try ProgramLocator.resolve(program)
      let preload = try ProgramLocator.preloadLibrary()
      let name = String(program.split(separator: "/").last ?? "program")
      let destination = try TraceDestination(
        path: ProgramLocator.absolute(output ?? "heapline.\(name).\(getpid()).trace"),
        protected: [executable, preload], force: force)
      let path = destination.path
      TraceRecovery.clearExecTraces(of: path)
      if rotate != nil { RotatedTraces.clear(of: path) }
      let shared = try SharedBuffers()
      var environment = [
        "LD_PRELOAD": preload, "HEAPLINE_OUTPUT": path, "HEAPLINE_DEPTH": String(depth),
        "HEAPLINE_RECORDER_PID": String(getpid()), "HEAPLINE_MARK_SIGNAL": String(markSignal),
        "HEAPLINE_SHARED": shared.pathForChild, "HEAPLINE_PRELOAD": preload,
        // The program's own LD_PRELOAD, exactly ("+value"), or none ("-"): the shim puts it back
        "HEAPLINE_PRELOAD_WAS": getenv("LD_PRELOAD").map { "+" + String(cString: $0) } ?? "-",
        // The mode of the files the shim makes (after an exec, each rotation): this command's,
        // not the program's umask (a program that set 0777 left traces no one could read)
        "HEAPLINE_TRACE_MODE": String(Self.traceFileMode),
      ]
      if let every = markEvery {
        environment["HEAPLINE_MARK_EVERY_MS"] = String(Int((every * 1000).rounded()))
      }
      environment.merge(try memory.environment()) { $1 }
      environment.merge(leakScans.environment(sampling: sampleBytes != nil)) { $1 }
      if let bytes = sampleBytes { environment["HEAPLINE_SAMPLE_BYTES"] = String(bytes) }
      if let seconds = rotate { environment["HEAPLINE_ROTATE_SECONDS"] = String(seconds) }
      let status: ChildProcess.Status
      do {
        status = try ChildProcess.run(
          executable: executable, arguments: command, environment: environment,
          delivering: [markSignal, memory.warnSignal, leakScans.leaksSignal].filter { $0 > 0 })
      } catch {
        destination.discardIfUnused()
        throw error
      }
      if rotate != nil {
        destination.discardIfUnused()  // the files have names of their own
        let files = RotatedTraces.files(of: path)
        if let last = files.last {
          try TraceRecovery.finish(trace: last, shared: shared, status: status)
          let symbolizer = Symbolizer()
          for file in files {
            if symbols { TraceSymbols.store(in: file, symbolizer: symbolizer) }
            CLIOutput.note("trace written to \(file)")
          }
          // a failed write stops the recording in the file it hit
          try checkNotCutShort(try? TraceReader(path: last), path: last)
          try finish(program: program, name: name, trace: last, status: status)
        }
      }
      try destination.checkNotReplaced(execed: shared.execTraces != nil)
      try TraceRecovery.finish(trace: path, shared: shared, status: status)
      let written = try? TraceReader(path: path)
      try checkNotCutShort(written, path: path)
      if destination.wasWritten, let written {
        TraceRecovery.noteExitStatus(in: written, status)
      }
      if symbols, destination.wasWritten {
        TraceSymbols.store(in: path, symbolizer: Symbolizer())
      }
      if destination.wasWritten {
        CLIOutput.note(destination.notice)
      } else if shared.endedForExec {
        destination.discardIfUnused()
        CLIOutput.warning(
          "the program that '\(program)' became with exec did not load the preload library (a "
            + "static or setuid program?): it was not traced")
      } else if status.signal != 0 && FileIdentity(path: path) != nil {
        // Killed as it started (a signal to record, passed on): neither static nor setuid
        destination.discardIfUnused()
        CLIOutput.warning(
          "'\(program)' was ended by signal \(status.signal) before the shim wrote its trace: "
            + "no trace was written")
      } else if shared.shimStarted {
        CLIOutput.warning(
          "the trace was recorded, but '\(path)' is no longer there: the program moved or "
            + "removed it")
      } else {
        destination.discardIfUnused()
        let why =
          if let library = shared.programMallocLibrary {
            "allocates with \(library), not glibc's malloc, which the preload library does not "
              + "trace (it ran with its allocator, untraced)"
          } else if shared.programHasOwnMalloc {
            "has a malloc of its own (defined in it, or an allocator linked in statically), "
              + "which the preload library cannot wrap"
          } else {
            "did not load the preload library (a static or setuid program?)"
          }
        CLIOutput.warning("'\(program)' \(why): no trace was written")
      }
      try finish(program: program, name: name, trace: path, status: status)
    }

    /// A trace whose write failed (a disk that filled) ends with what was written, and says so
    /// in its trailer: `record` fails, as it does when the trace cannot be written at all, and
    /// keeps the file, which reads up to the failure. `reader` reads the trace at `path` (nil
    /// when it cannot be read).
    private func checkNotCutShort(_ reader: TraceReader?, path: String) throws {
      guard reader?.trailer?.endReason == .writeFailed else { return }
      CLIOutput.error(
        "the trace in '\(path)' is cut short: writing it failed (see above), so what the "
          + "program did after that is missing")
      throw ExitCode(125)
    }

    /// The last words: how the program ended, and its exit status as heapline's.
    private func finish(
      program: String, name: String, trace path: String, status: ChildProcess.Status
    )
      throws
    {
      // A kill for --memory-limit is reported with its low-memory report instead.
      let killedForBudget =
        status.signal == SIGKILL
        && MemoryPressureOptions.reportKill(program: name, trace: path) != nil
      if status.signal != 0 && !killedForBudget {
        CLIOutput.note("'\(program)' was ended by signal \(status.signal)")
      }
      throw ExitCode(status.code)
    }

    /// The mode this command makes a trace with: 0644 less its umask, read without changing it
    /// for long (the command is single-threaded here).
    static var traceFileMode: Int {
      let mask = umask(0)
      umask(mask)
      return 0o644 & ~Int(mask)
    }
  }
}
