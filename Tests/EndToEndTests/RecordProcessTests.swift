import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record` as a parent, as `env` and `timeout` are: exit statuses 125, 126 and 127
/// for what went wrong before the program ran, the program's own status otherwise; signals sent
/// to heapline reach the program; and the program never outlives heapline.
@Suite struct RecordProcessTests {
  /// `heapline record -o TRACE -- /bin/sh -c SCRIPT`, started and left running; SCRIPT may
  /// use $1, the path of a file it creates once it is ready for signals.
  struct Running {
    let child: SpawnedChild
    let output: SpawnedChild.Collected
    let ready: String

    init(script: String, in dir: URL) throws {
      ready = dir.appendingPathComponent("ready").path
      let trace = dir.appendingPathComponent("sh.trace").path
      child = try SpawnedChild(
        executable: Harness.heapline,
        arguments: ["record", "-o", trace, "--", "/bin/sh", "-c", script, "sh", ready],
        environment: ProcessInfo.processInfo.environment)
      output = child.collect(stdin: Data())
    }

    /// Waits for the ready file; false if it never came (the child is then killed).
    func waitUntilReady() -> Bool {
      let deadline = Date(timeIntervalSinceNow: Harness.defaultTimeout)
      while Date() < deadline {
        if FileManager.default.fileExists(atPath: ready) { return true }
        if child.wait(seconds: 0.01) != nil { return false }
      }
      child.killGroup()
      return false
    }

    /// heapline's status, stdout and stderr, killing its group when it outlives the deadline.
    func finish() -> Harness.Result? {
      let deadline = Date(timeIntervalSinceNow: Harness.defaultTimeout)
      guard let status = child.wait(seconds: Harness.defaultTimeout),
        let (stdout, stderr) = output.wait(until: deadline)
      else {
        child.killGroup()
        return nil
      }
      return Harness.Result(
        status: status, stdout: String(decoding: stdout, as: UTF8.self),
        stderr: String(decoding: stderr, as: UTF8.self))
    }
  }

  @Test func aMissingProgramIs127AndANonExecutableOneIs126() throws {
    let dir = try Harness.temporaryDirectory()
    let missing = try Harness.heapline(["record", "--", dir.appendingPathComponent("no").path])
    #expect(missing.status == 127)
    #expect(missing.stderr.contains("not found"))
    // A file without execute permission, a directory, and one that execve cannot run
    let plain = dir.appendingPathComponent("plain").path
    try Data("#!/bin/sh\necho never\n".utf8).write(to: URL(fileURLWithPath: plain))
    let junk = dir.appendingPathComponent("junk").path
    try Data("neither ELF nor a script\n".utf8).write(to: URL(fileURLWithPath: junk))
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: junk)
    let trace = dir.appendingPathComponent("t.trace").path
    for (program, reason) in [
      (plain, "it is not executable"), (dir.path, "it is a directory"),
      (junk, "Exec format error"),
    ] {
      let result = try Harness.heapline(["record", "-o", trace, "--", program])
      #expect(result.status == 126, "\(program)")
      #expect(result.stderr == "heapline: cannot run '\(program)': \(reason)\n")
      #expect(result.stdout.isEmpty)
    }
    // No trace is left behind for a program that never ran
    #expect(!FileManager.default.fileExists(atPath: trace))
  }

  @Test func aFailureOfRecordItselfIs125() throws {
    let result = try Harness.heapline(
      ["record", "--", "true"], environment: ["HEAPLINE_PRELOAD": "/nonexistent/preload.so"])
    #expect(result.status == 125)
    #expect(
      result.stderr
        == "heapline: HEAPLINE_PRELOAD names '/nonexistent/preload.so', which cannot be read\n")
  }

  @Test func aProgramEndedBySignalNGives128PlusN() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("t.trace").path
    let result = try Harness.heapline([
      "record", "-o", trace, "--", "/bin/sh", "-c", "kill -TERM $$",
    ])
    #expect(result.status == 128 + SIGTERM)
    #expect(result.stderr.contains("'/bin/sh' was ended by signal \(SIGTERM)"))
  }

  @Test func sigtermToRecordReachesTheProgramWhoseStatusPassesThrough() throws {
    // Given a program that exits 42 on SIGTERM
    let dir = try Harness.temporaryDirectory()
    let running = try Running(
      script: "trap 'echo got TERM; exit 42' TERM; : > \"$1\"; while :; do sleep 0.05; done",
      in: dir)
    try #require(running.waitUntilReady())
    // When heapline gets SIGTERM
    kill(running.child.pid, SIGTERM)
    // Then the program got it, and heapline finishes its trace and exits with 42
    let result = try #require(running.finish())
    #expect(result.status == 42)
    #expect(result.stdout == "got TERM\n")
    #expect(result.stderr.contains("trace written to"))
  }

  @Test func sighupAndSigintToRecordEndAProgramThatDoesNotCatchThem() throws {
    for sig in [SIGHUP, SIGINT, SIGQUIT] {
      let dir = try Harness.temporaryDirectory()
      // `exec` so that the shell's SIGINT handling is not in the way: sleep takes the default
      let running = try Running(script: ": > \"$1\"; exec sleep 300", in: dir)
      try #require(running.waitUntilReady())
      kill(running.child.pid, sig)
      let result = try #require(running.finish())
      #expect(result.status == 128 + sig)
      #expect(result.stderr.contains("'/bin/sh' was ended by signal \(sig)"))
    }
  }

  @Test func theProgramDiesWithAKilledRecord() throws {
    // Given a program that records its pid and sleeps
    let dir = try Harness.temporaryDirectory()
    let running = try Running(
      script: "echo $$ > \"$1.pid\"; mv \"$1.pid\" \"$1\"; exec sleep 300", in: dir)
    try #require(running.waitUntilReady())
    let text = try String(contentsOfFile: running.ready, encoding: .utf8)
    let program = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    defer { kill(program, SIGKILL) }
    // When heapline is killed with SIGKILL, which it cannot forward
    kill(running.child.pid, SIGKILL)
    _ = running.finish()  // its pipes close only once the program holding them is gone too
    // Then the program is gone as well (a zombie at most, until init reaps it)
    #expect(
      Harness.hasEnded(program), "program \(program) is \(Harness.processState(program) ?? "gone")")
  }

  @Test func signalOptionsRefuseSignalsTheShimMustNotCatch() throws {
    let refused: [(String, Int32)] = [
      ("--mark-signal", SIGSEGV), ("--mark-signal", SIGKILL), ("--warn-signal", SIGSTOP),
      ("--warn-signal", SIGABRT), ("--leaks-signal", SIGPROF), ("--leaks-signal", SIGBUS),
      ("--mark-signal", SIGILL), ("--mark-signal", SIGFPE), ("--mark-signal", SIGTRAP),
      ("--mark-signal", SIGSYS), ("--mark-signal", 65), ("--mark-signal", -1),
    ]
    for (option, number) in refused {
      let result = try Harness.heapline(["record", "\(option)=\(number)", "--", "true"])
      #expect(result.status == 64, "\(option) \(number)")
      #expect(result.stderr.hasPrefix("heapline: \(option) "), "\(result.stderr)")
    }
    // A real-time signal for marks is fine, and 0 means none
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("t.trace").path
    let accepted = try Harness.heapline(
      ["record", "-o", trace, "--mark-signal", "40", "--warn-signal", "0", "--", "true"])
    #expect(accepted.status == 0)
  }

  @Test func oneSignalCannotHaveTwoMeanings() throws {
    let result = try Harness.heapline(
      ["record", "--mark-signal", "10", "--warn-signal", "10", "--", "true"])
    #expect(result.status == 64)
    #expect(
      result.stderr.hasPrefix("heapline: --mark-signal and --warn-signal cannot both be signal 10"))
  }

  @Test func everySignalSentToRecordThatWouldEndItReachesTheProgramInstead() throws {
    // Given a program that handles SIGUSR1, SIGUSR2, SIGALRM and SIGRTMIN+2 and sends each to
    // its parent, record (which died of the first, and the program with it: an empty trace)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "signals"])
    // Then the program's handlers ran, and it ended as it would untraced, with all its blocks
    #expect(result.status == 3, "\(result.stderr)")
    #expect(result.stdout == "handled 4\n")
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 112 Bytes")?.totalCount == 200)
  }

  @Test func aProgramThatStopsStopsRecordAndRecordContinuesIt() throws {
    // Given a program that stops itself under record, which waited for it for ever (an
    // interactive shell never got its terminal back): record must stop too, and when it is
    // continued, continue the program
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let script = """
      "$0" record -o "$1" -- "$2" stop & record=$!
      for i in $(seq 200); do
        grep -q '^State:.*T' /proc/$record/status && break
        sleep 0.05
      done
      grep -q '^State:.*T' /proc/$record/status && echo "record stopped" || kill -9 $record
      kill -CONT $record
      wait $record
      """
    let result = try Harness.run("/bin/bash", ["-c", script, Harness.heapline, trace, program])
    #expect(result.status == 4, "\(result.stderr)")
    #expect(result.stdout == "stopping\nrecord stopped\nresumed\n")
  }

  @Test func aProgramContinuedByAnotherProcessLetsRecordGoOnToo() throws {
    // Given a program that stops and that a child of its own continues: record, stopped with
    // it, stayed stopped for ever (only the shell's fg would have moved it)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "stopcont"])
    #expect(result.status == 4, "\(result.stderr)")
    #expect(result.stdout == "stopping\nresumed\n")
  }

  @Test func eachStopOfAProgramTakesOneContinueOfItsGroup() throws {
    // Given a program that stops itself 5 times, at once again each time it goes on, in a
    // group of its own with record, which a shell continues (fg) each time record stops: record
    // continued the program again after the shell had, and undid its next stop (2 of 4 stops
    // were left for the shell)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let script = """
      setsid "$0" record -o "$1" -- "$2" restop & record=$!
      continues=0
      for i in $(seq 3000); do
        kill -0 $record 2>/dev/null || break
        if grep -q '^State:.*T' /proc/$record/status; then
          sleep 0.05; kill -CONT -$record; continues=$((continues + 1))
        fi
        sleep 0.01
      done
      wait $record; echo "status $? after $continues continues"
      """
    let result = try Harness.run("/bin/bash", ["-c", script, Harness.heapline, trace, program])
    #expect(result.stdout == "continued 5\nstatus 4 after 5 continues\n", "\(result.stderr)")
  }

  @Test func aSignalTheProgramSendsToItsGroupReachesItOnce() throws {
    // Given a program that sends SIGUSR1 to its process group, record included: record passed
    // it on again, and the program handled it twice
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "group"])
    #expect(result.status == 3, "\(result.stderr)")
    #expect(result.stdout == "handled 1\n")
  }

  @Test func aSignalThatComesAfterTheProgramEndedLeavesItsStatus() throws {
    // Given a program that exits at once and whose child sends SIGTERM to record as soon as the
    // program has ended, while record finishes the trace (its symbols not cached): record died
    // of it (143)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", program, "late"], environment: ["HEAPLINE_SYMBOL_CACHE": ""])
    #expect(result.status == 5, "\(result.stderr)")
  }

  @Test func recordsNoticesOnAClosedPipeLeaveTheProgramsStatus() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("supervised", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    // Given record's stderr a pipe whose reader has gone, and a program that exits with 64
    let result = try Harness.run(
      "/bin/bash",
      [
        "-c", "\"$0\" record -o \"$1\" -- \"$2\" 2>&1 >/dev/null | true; echo ${PIPESTATUS[0]}",
        Harness.heapline, trace, program,
      ])
    // Then record's status is the program's, not 141 (SIGPIPE) from writing its notice
    #expect(result.stdout == "64\n")
  }
}
