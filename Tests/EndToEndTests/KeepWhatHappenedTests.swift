import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// However a program ends, what it allocated reaches the trace: every one of the 5,000 blocks of
/// 1,000 bytes that Fixtures/endings.c makes before it ends (heaptrack kept 4,943 of 5,000
/// before an `_exit`).
@Suite struct KeepWhatHappenedTests {
  struct Run {
    var result: Harness.Result
    var trace: URL
    var stats: Statistics
  }

  func record(_ arguments: [String], traceName: String = "endings.trace") throws -> Run {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent(traceName)
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", program] + arguments)
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    return Run(result: result, trace: trace, stats: stats)
  }

  /// Records the fixture in `mode`, with its own path and "exit" after it: the program it execs.
  func recordExecingItself(_ mode: String, traceName: String) throws -> (
    result: Harness.Result, trace: URL, program: String
  ) {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent(traceName)
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", program, mode, program, "exit"])
    return (result, trace, program)
  }

  /// The fixture's blocks: 1,000 bytes fall in the 1,008-byte size class, which nothing else
  /// the fixture or libc allocates uses.
  func blocks(_ stats: Statistics) -> CategoryStatistics? {
    stats.category(named: "Malloc 1008 Bytes")
  }

  @Test(
    arguments: [
      ("_exit", Int32(3)), ("abort", Int32(128 + 6)), ("segv", Int32(128 + 11)),
      ("kill", Int32(128 + 9)),
    ] as [(String, Int32)])
  func everyBlockSurvivesAnEndThatSkipsTheShimsDestructor(mode: String, status: Int32) throws {
    let run = try record([mode])
    #expect(run.result.status == status)
    #expect(run.result.stderr.contains("before the shim could finish the trace"))
    #expect(run.stats.trace.isComplete)
    #expect(run.stats.trace.endReason == .endedUnfinished)
    let made = try #require(blocks(run.stats))
    #expect(made.totalCount == 5000)
    #expect(made.persistentCount == 5000)
    #expect(made.persistentBytes == 5_000_000)
    let reader = try TraceReader(path: run.trace.path)
    #expect(reader.trailer?.exitStatus == UInt32(status))
    #expect(reader.trailer?.flags.contains(.writtenByRecorder) == true)
    // And `leaks` says why there is no scan at exit, and what scans while the program runs
    let leaks = try Harness.heapline(["leaks", run.trace.path])
    #expect(leaks.status == 2)
    #expect(
      leaks.stderr.hasSuffix(
        "\nheapline: trace '\(run.trace.path)' holds no leak scan: the program ended without"
          + " exit() (_exit, abort, a crash or a kill), where the scan at exit runs;"
          + " --leaks-every or --leaks-signal scan while it runs\n"))
  }

  @Test(arguments: ["kill", "exit"])
  func aBufferOutsideTheSharedMemoryIsSaidMissingWhenTheProgramDies(mode: String) throws {
    // Given a file size limit (1 MB) under which the memory shared with record cannot grow to
    // its first buffer (2 MiB), so the shim keeps that buffer in the program's own memory
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("limited.trace").path
    let result = try Harness.run(
      "/bin/sh",
      [
        "-c", "ulimit -f 1000; exec \"$0\" record --no-leaks -o \"$1\" -- \"$2\" \"$3\"",
        Harness.heapline, trace, program, mode,
      ])
    let reader = try TraceReader(path: trace)
    let missing = reader.trailer?.flags.contains(.buffersLost) == true
    let stats = try Statistics(reader: reader)
    if mode == "kill" {
      // Then, killed, the program's blocks are gone with that memory, and the trace says so,
      // where it passed for whole (0 lost events)
      #expect(result.status == 128 + 9)
      #expect(missing)
      #expect(result.stderr.contains("is missing events, uncounted"))
      let report = try Harness.heapline(["report", trace])
      #expect(report.stdout.contains("  Trace INCOMPLETE, the process ended before the shim"))
    } else {
      // And a program that exits has them all written by the shim, with nothing said missing
      #expect(result.status == 0)
      #expect(!missing)
      #expect(blocks(stats)?.totalCount == 5000)
    }
  }

  @Test(.enabled(if: getuid() == 0, "it drops root's privileges"))
  func aDaemonThatDropsItsPrivilegesAndClosesEveryDescriptorKeepsItsTrace() throws {
    // Given a program that becomes nobody and then closes every descriptor with close_range:
    // the shim could not open the trace again as nobody, and the recording stopped with what
    // the program had made lost (record said the write failed, with 125)
    let run = try record(["dropclose"])
    #expect(run.result.status == 0, "\(run.result.stderr)")
    #expect(run.stats.trace.isComplete)
    #expect(blocks(run.stats)?.totalCount == 8000)
  }

  @Test func aNormalExitIsFinishedByTheShimItself() throws {
    let run = try record(["exit"])
    #expect(run.result.status == 0)
    // With the exit status, which the shim leaves to the recorder (the JSON said null)
    #expect(try TraceReader(path: run.trace.path).trailer?.exitStatus == 0)
    let report = try Harness.heapline(["report", run.trace.path])
    #expect(report.stdout.contains("\n  Trace complete, the process exited with status 0\n"))
    #expect(!run.result.stderr.contains("before the shim could finish"))
    #expect(run.stats.trace.endReason == .exited)
    #expect(blocks(run.stats)?.persistentCount == 5000)
  }

  @Test func execIsFollowedAndThePartBeforeItIsKeptBesideTheTrace() throws {
    // Given the fixture, which execs itself in its "exit" mode once it has made its blocks
    let (result, trace, program) = try recordExecingItself("exec", traceName: "exec.trace")
    #expect(result.status == 0)
    #expect(result.stderr.contains("ran exec 1 time(s)"))
    // The program after the exec has the trace asked for; the one before it, TRACE.1
    let after = try Statistics(reader: TraceReader(path: trace.path))
    let before = try Statistics(reader: TraceReader(path: trace.path + ".1"))
    #expect(after.trace.endReason == .exited)
    #expect(before.trace.endReason == .exec)
    #expect(blocks(after)?.persistentCount == 5000)
    #expect(blocks(before)?.persistentCount == 5000)
    #expect(before.trace.pid == after.trace.pid)
    // Recorded again to the same path, the earlier run's TRACE.1 is replaced, not added to
    let again = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", program, "exec", program, "exit"])
    #expect(
      again.stderr.contains(
        "ran exec 1 time(s): the trace of each program before it is in \(trace.path).1"))
    #expect(!FileManager.default.fileExists(atPath: trace.path + ".2"))
  }

  @Test func theTraceAfterAnExecHasTheModeRecordGaveTheFirstNotTheProgramsUmask() throws {
    // Given a program that sets its umask to 0777 and execs itself: the trace its next program's
    // shim made had mode 0 (no one but root could read it)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("umaskexec", in: dir)
    let trace = dir.appendingPathComponent("umask.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "after exec\n")
    // Then both traces have the mode record made the first with
    func mode(_ path: String) throws -> Int? {
      try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
    }
    let first = try #require(try mode(trace + ".1"))
    #expect(first & 0o600 == 0o600)
    #expect(try mode(trace) == first)
  }

  @Test func aFailedExecKeepsBothHalves() throws {
    let run = try record(["exec-fails"], traceName: "failed.trace")
    #expect(run.result.status == 0)
    let before = try Statistics(reader: TraceReader(path: run.trace.path + ".1"))
    #expect(before.trace.endReason == .exec)
    #expect(blocks(before)?.totalCount == 5000)
    // The recording starts again after the failed exec: the 3,000 blocks made after it
    #expect(run.stats.trace.endReason == .exited)
    #expect(blocks(run.stats)?.totalCount == 3000)
  }

  @Test func anExecOfAProgramThatIsNotThereSplitsNothing() throws {
    // Given an exec of a path where no file is: the trace was ended before it, moved aside and
    // begun again after it failed, so the 5,000 blocks made before it were neither freed nor
    // scanned in the trace that went on
    let run = try record(["exec-missing"], traceName: "missing.trace")
    #expect(run.result.status == 0)
    // Then one trace holds them all, and no other file was made
    #expect(run.stats.trace.endReason == .exited)
    #expect(blocks(run.stats)?.totalCount == 8000)
    #expect(!FileManager.default.fileExists(atPath: run.trace.path + ".1"))
  }

  @Test func aShellThatLooksForItsProgramThroughPATHLeavesOneTraceBeforeIt() throws {
    // Given a shell that execs a program found in the third directory of PATH: the shell tries
    // each directory with execve, and every miss split the trace (an empty TRACE.N for each)
    let dir = try Harness.temporaryDirectory()
    _ = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("path.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", "/bin/sh", "-c", "exec endings exit"],
      environment: ["PATH": "/nonexistent/a:/nonexistent/b:\(dir.path):/usr/bin:/bin"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the shell's trace is the only one before the program's
    #expect(result.stderr.contains("the program ran exec 1 time(s)"), "\(result.stderr)")
    #expect(FileManager.default.fileExists(atPath: trace + ".1"))
    #expect(!FileManager.default.fileExists(atPath: trace + ".2"))
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(blocks(stats)?.totalCount == 5000)
    // And `leaks` on the shell's trace says where its scan went, not to record with --leaks
    let leaks = try Harness.heapline(["leaks", trace + ".1"])
    #expect(leaks.status == 2)
    #expect(leaks.stderr.contains("the program left it with exec before its exit"))
  }

  @Test func aThreadStartedAfterAFailedExecKeepsItsBlocksThroughTheNextExec() throws {
    // The recording begun again after the failed exec handed the new thread a buffer over the
    // main thread's, in shared memory it then shrank: the next exec died of SIGBUS
    let run = try record(["exec-fails-thread", "/bin/true"], traceName: "thread.trace")
    #expect(run.result.status == 0)
    let first = try Statistics(reader: TraceReader(path: run.trace.path + ".1"))
    #expect(first.trace.endReason == .exec)
    #expect(blocks(first)?.totalCount == 5000)
    let second = try Statistics(reader: TraceReader(path: run.trace.path + ".2"))
    #expect(second.trace.endReason == .exec)
    #expect(blocks(second)?.totalCount == 3000)
    #expect(run.stats.trace.endReason == .exited)
  }

  @Test func anExecThatSucceedsWhileAnotherThreadsExecsFailIsFollowedIntoTheNextProgram() throws {
    // Given a program with a thread that runs failing execs one after another, while the main
    // thread execs the fixture again (which makes its 5,000 blocks and exits): an exec that
    // came while another was failing found the recording ended and not yet begun again, and
    // the next program went untraced (7 runs in 10 of a tester's)
    let (result, trace, _) = try recordExecingItself("exec-race", traceName: "race.trace")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stderr.contains("warning"), "\(result.stderr)")
    // Then the trace at the path is the next program's, whole
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.endReason == .exited)
    #expect(blocks(stats)?.totalCount == 5000)
  }

  @Test func aRecordingBegunAgainAfterTheMainThreadsExitNamesTheProgramsFrames() throws {
    // Given a program whose main thread exits, and whose worker then runs an exec that fails
    // and makes 3,000 blocks: the recording begun again named the program by /proc/self/exe,
    // the main thread's link, which reads as nothing once it has exited
    let run = try record(["worker-exec-fails"], traceName: "worker.trace")
    #expect(run.result.status == 0, "\(run.result.stderr)")
    #expect(blocks(run.stats)?.totalCount == 3000)
    // Then the blocks' frames are named: the program's module has its path
    let report = try Harness.heapline(["report", run.trace.path])
    #expect(report.stdout.contains("make_blocks"), "\(report.stdout)")
  }

  @Test func aShellThatExecsTheProgramIsFollowedIntoIt() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("sh.trace")
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", "/bin/sh", "-c", "exec \(program) _exit"])
    #expect(result.status == 3)
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.endReason == .endedUnfinished)
    #expect(blocks(stats)?.persistentCount == 5000)
    let shell = try Statistics(reader: TraceReader(path: trace.path + ".1"))
    #expect(shell.trace.endReason == .exec)
  }

  @Test func aShellScriptThatEndsWithExitIsWhole() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("dash.trace")
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", "/bin/sh", "-c", "x=$(echo 1); exit 3"])
    #expect(result.status == 3)
    // dash leaves by _exit, so heaptrack keeps none of its allocations; heapline finishes
    // the trace from the shared buffers
    let reader = try TraceReader(path: trace.path)
    #expect(reader.trailer?.endReason == .endedUnfinished)
    #expect(reader.trailer?.exitStatus == 3)
    let stats = try Statistics(reader: reader)
    #expect(UInt64(stats.totals.allocationCount) == reader.trailer?.allocCount)
  }

  @Test func daemonKeepsWhatTheProcessMadeBeforeIt() throws {
    let run = try record(["daemon"])
    #expect(run.result.status == 0)
    #expect(blocks(run.stats)?.totalCount == 5000)
    #expect(run.stats.trace.isComplete)
  }
}
