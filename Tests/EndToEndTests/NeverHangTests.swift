import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Heapline never hangs a program (issue 8): not at exit when the program reaps its children in
/// a SIGCHLD handler, not when a thread cannot be stopped, not when the program is killed during
/// the exit scan, and not when the main thread leaves with pthread_exit.
@Suite struct NeverHangTests {
  /// `heapline record ARGUMENTS` under coreutils' timeout, so that a hang ends the run with
  /// status 124 instead of stalling the suite.
  func record(_ arguments: [String], environment: [String: String] = [:], seconds: Int = 30)
    throws -> Harness.Result
  {
    try Harness.run(
      "/usr/bin/timeout", ["-k", "5", "\(seconds)", Harness.heapline, "record"] + arguments,
      environment: environment, timeout: max(Harness.defaultTimeout, Double(seconds + 30)))
  }

  @Test func aChainOfThreadsAfterTheMainThreadsExitRunsToItsOwnEnd() throws {
    // Given a program whose main thread exits while a chain of threads runs on, each starting
    // the next and exiting, for 3 s; the shim's thread looks for the last thread's exit every
    // 10 ms (the sample period): it listed the threads, then read each one's state, and a
    // thread that started the next and exited in between ended the process early (exit 0)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("threadchain", in: dir)
    let trace = dir.appendingPathComponent("chain.trace")
    let result = try record(
      ["--no-leaks", "-o", trace.path, "--", program, "3000"],
      environment: ["HEAPLINE_SAMPLE_MS": "10"])
    // Then it ends as the chain's last thread ends it
    #expect(result.status == 3, "\(result.stderr)")
    #expect(result.stdout.hasPrefix("chain of "))
    let threads = try #require(Int(result.stdout.split(separator: " ")[2]))
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.isComplete)
    #expect(stats.category(named: "Malloc 48 Bytes")?.totalCount == UInt64(threads))
  }

  @Test func aProgramWhoseLastThreadCanOpenNoDescriptorEndsWhenItDoes() throws {
    // Given a program that lowers its descriptor limit to 3, then leaves main with
    // pthread_exit: the shim's thread could no longer open the main thread's status to see
    // that the last thread had gone, and the process lived on, with SIGTERM blocked
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("nofiles", in: dir)
    let trace = dir.appendingPathComponent("nofiles.trace").path
    let result = try record(["-o", trace, "--", program], seconds: 20)
    // Then it ends as untraced, with its output, and the trace is whole
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "worker done\n")
    #expect(try TraceReader(path: trace).trailer?.endReason == .exited)
    // And so it does when it first closed every descriptor, the shim's status among them (the
    // trace is opened again before the limit comes): the shim's thread then ends itself, and
    // glibc ends the process with the last thread
    let closed = try record(["-o", trace, "--", program, "closeall"], seconds: 20)
    #expect(closed.status == 0, "\(closed.stderr)")
    #expect(closed.stdout == "worker done\n")
  }

  @Test func aLeakScanWhileAThreadReloadsALibraryNeverWaitsForTheLoader() throws {
    // Given a program whose thread loads and unloads a library 3,000 times while two others
    // allocate, scanned every 10 ms: a scan asked the loader whether modules had come or gone
    // while it held the live table, and dlclose, which holds the loader's lock while it frees
    // the library's pieces, waited in free for the live table (3 runs of 3 hung)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let library = dir.appendingPathComponent("plugin.so").path
    let cc = try Harness.run(
      "/usr/bin/env",
      ["cc", "-g", "-shared", "-fPIC", "-o", library, Harness.fixtures.path + "/plugin.c"])
    try #require(cc.status == 0, "cc failed: \(cc.stderr)")
    let program = try Harness.fixture("reloading", in: dir)
    for run in 1...3 {
      let trace = dir.appendingPathComponent("reloading-\(run).trace").path
      let result = try record(
        ["--leaks-every", "0.01", "-o", trace, "--", program, library, "3000", "2"], seconds: 60)
      // Then every run ends, with its scans and the program's own output
      #expect(result.status == 0, "run \(run) ended with \(result.status): \(result.stderr)")
      #expect(result.stdout == "reloaded 3000\n")
      let report = try LeakReport.read(path: trace, scan: nil, symbolizer: nil)
      #expect(report.scan.trigger == .exit)
      #expect(report.definitelyLost == LeakAmount())
    }
  }

  @Test func aRotationWhileAThreadReloadsALibraryNeverWaitsForTheLoader() throws {
    // Given a program whose thread loads and unloads a library that needs eight others, 15,000
    // times, while two others allocate, recorded in files of a second: holding every thread's
    // buffer, the switch to the next file asked the loader for the module map, and a dlclose
    // freeing the libraries' pieces under the loader's lock waited for its buffer (4 runs of 4)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let source = Harness.fixtures.appendingPathComponent("reloaded.c").path
    for dep in 1...8 {
      let cc = try Harness.run(
        "/usr/bin/env",
        ["cc", "-shared", "-fPIC", "-DDEP=\(dep)", "-o", dir.path + "/libdep\(dep).so", source])
      try #require(cc.status == 0, "cc failed: \(cc.stderr)")
    }
    let plugin = dir.appendingPathComponent("plugin.so").path
    let cc = try Harness.run(
      "/usr/bin/env",
      ["cc", "-shared", "-fPIC", "-o", plugin, source, "-L", dir.path]
        + (1...8).map { "-ldep\($0)" } + ["-Wl,-rpath,$ORIGIN"])
    try #require(cc.status == 0, "cc failed: \(cc.stderr)")
    let program = try Harness.fixture("reloading", in: dir)
    let trace = dir.appendingPathComponent("rotated.trace").path
    let result = try record(
      ["--no-leaks", "--rotate", "1", "-o", trace, "--", program, plugin, "15000", "2"],
      seconds: 120)
    // Then it ends, in files of a second each
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "reloaded 15000\n")
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
      .filter { $0.hasPrefix("rotated.0") }
    #expect(files.count >= 2, "\(files)")
  }

  @Test func aProgramThatReapsChildrenInASigchldHandlerEndsEveryOneOfFortyRuns() throws {
    // Given a program whose SIGCHLD handler reaps with waitpid(-1): the exit scan's helper once
    // ran it, and it took the stops the helper waited for (14 hangs in 40 runs)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("reaper", in: dir)
    for run in 1...40 {
      let trace = dir.appendingPathComponent("reaper-\(run).trace")
      // When it is recorded, with the exit scan
      let result = try record(["-o", trace.path, "--", program])
      // Then every run ends with the program's status and output, and a finished trace whose
      // exit scan found the 3 lost blocks of 40 bytes
      #expect(result.status == 0, "run \(run) ended with \(result.status): \(result.stderr)")
      #expect(result.stdout == "reaped 3\n")
      let report = try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil)
      #expect(report.scan.trigger == .exit)
      #expect(report.definitelyLost == LeakAmount(blocks: 3, bytes: 120))
      #expect(try TraceReader(path: trace.path).isComplete)
      if result.status != 0 { break }
    }
  }

  @Test func bashExitingWithThreeEndsWithThreeInEveryOneOfAHundredRuns() throws {
    // Given bash, which reaps its children in a SIGCHLD handler (9 hangs in 100 runs)
    let dir = try Harness.temporaryDirectory()
    for run in 1...100 {
      let trace = dir.appendingPathComponent("bash-\(run).trace")
      let result = try record(["-o", trace.path, "--", "/bin/bash", "-c", "exit 3"])
      #expect(result.status == 3, "run \(run) ended with \(result.status): \(result.stderr)")
      let reader = try TraceReader(path: trace.path)
      #expect(reader.isComplete)
      #expect(
        try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil).scan.trigger == .exit)
      if result.status != 3 { break }
    }
  }

  /// The two ways of stopping the world: ptrace, and signals (HEAPLINE_STOP_SIGNAL=27, SIGPROF).
  static let stopMechanisms: [[String: String]] = [[:], ["HEAPLINE_STOP_SIGNAL": "27"]]

  @Test(arguments: stopMechanisms)
  func aThreadThatCannotStopIsCountedAsUnresponsiveAndTheExitScanGoesOn(
    environment: [String: String]
  ) throws {
    // Given a program with a thread waiting for a vfork child (no signal and no ptrace stop
    // reaches it until the child ends, 30 s later), 200,000 list nodes kept and 7 blocks of 24
    // bytes lost
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("stuckthread", in: dir)
    let trace = dir.appendingPathComponent("stuck.trace")
    let pidFile = dir.appendingPathComponent("pid").path
    // When it is recorded, with the exit scan
    let result = try record(["-o", trace.path, "--", program, pidFile], environment: environment)
    // Then the scan gives up on that thread after its deadline, scans its stack whole, and
    // finds exactly the lost blocks; the program ends as it would untraced
    #expect(result.status == 0, "\(result.stderr)")
    let report = try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil)
    #expect(report.scan.trigger == .exit)
    #expect(report.scan.threadsUnresponsive == 1)
    #expect(report.scan.flags.contains(.unresponsiveThreads))
    #expect(report.definitelyLost == LeakAmount(blocks: 7, bytes: 168))
    #expect(report.indirectlyLost == LeakAmount())
    #expect(try TraceReader(path: trace.path).isComplete)
  }

  @Test func killingTheProgramDuringItsExitScanEndsRecordWith137AndLeavesNoHelper() throws {
    // Given the program with the thread that cannot stop, so that its exit scan holds the
    // other threads stopped for half a second, recorded
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("stuckthread", in: dir)
    let trace = dir.appendingPathComponent("killed.trace")
    let pidFile = dir.appendingPathComponent("pid").path
    let recorder = try ProcessUnderDeadline(
      Harness.heapline, ["record", "-o", trace.path, "--", program, pidFile])
    defer { recorder.kill() }
    let pid = try #require(waitFor(seconds: 30) { Proc.pid(inFile: pidFile) })
    // When the scan's helper has attached to the program's threads
    let helper = try #require(waitFor(seconds: 30) { Proc.tracer(ofAnyThreadOf: pid) })
    let helperStart = try #require(Proc.stat(helper))
    #expect(helperStart.name == "heapline-scan")
    // And the program is killed
    #expect(Glibc.kill(pid, SIGKILL) == 0)
    // Then record returns with 128 + 9, and the helper has died with the program (a zombie
    // is dead: PID 1 in a container may never reap it)
    let status = recorder.wait(seconds: 20)
    #expect(status == 137, "record \(status.map { "ended with \($0)" } ?? "hung")")
    let helperGone = waitFor(seconds: 5) { () -> Bool? in
      guard let now = Proc.stat(helper), now.startTime == helperStart.startTime else { return true }
      return now.state == "Z" || now.state == "X" ? true : nil
    }
    #expect(helperGone == true, "the scan's helper \(helper) is still alive")
  }

  @Test func aScanWhoseHelperStopsAnsweringIsAbandonedAndSaysSo() throws {
    // Given the program with the thread that cannot stop, recorded
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("stuckthread", in: dir)
    let trace = dir.appendingPathComponent("abandoned.trace")
    let pidFile = dir.appendingPathComponent("pid").path
    let errors = dir.appendingPathComponent("stderr").path
    let recorder = try ProcessUnderDeadline(
      Harness.heapline, ["record", "-o", trace.path, "--", program, pidFile], stderr: errors)
    defer { recorder.kill() }
    let pid = try #require(waitFor(seconds: 30) { Proc.pid(inFile: pidFile) })
    // When the exit scan's helper is stopped with SIGSTOP while it waits for that thread
    let helper = try #require(waitFor(seconds: 30) { Proc.tracer(ofAnyThreadOf: pid) })
    #expect(Glibc.kill(helper, SIGSTOP) == 0)
    // Then the scanner stops waiting for it, kills it, which lets every thread go, and says on
    // stderr that the scan was abandoned; the program ends as it would untraced
    let status = recorder.wait(seconds: 20)
    #expect(status == 0, "record \(status.map { "ended with \($0)" } ?? "hung")")
    let stderr = try String(contentsOfFile: errors, encoding: .utf8)
    let reason = "could not run: the program's threads could not be stopped in time"
    #expect(stderr.contains("heapline: leak scan \(reason)\n"))
    #expect(try TraceReader(path: trace.path).isComplete)
    // And the trace says so too
    #expect(
      throws: AnalysisError.invalidOption(
        "trace '\(trace.path)' holds no leak scan: the leak scan at exit \(reason)")
    ) {
      try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil)
    }
  }

  @Test func whenTheMainThreadCallsPthreadExitTheProcessEndsAfterItsLastThread() throws {
    // Given a program whose main thread calls pthread_exit while a worker makes 10 blocks of
    // 1,000 bytes that a global keeps, and returns
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("lastthread", in: dir)
    let trace = dir.appendingPathComponent("last.trace")
    let untraced = try Harness.run("/usr/bin/timeout", ["-k", "5", "30", program])
    // When it is recorded
    let result = try record(["-o", trace.path, "--", program])
    // Then it ends as it does untraced: status 0, its atexit handler and destructor run
    #expect(untraced.status == 0)
    #expect(untraced.stdout == "worker made 14 blocks\natexit handler ran\ndestructor ran\n")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == untraced.stdout)
    // And the trace is finished, with the worker's blocks live at the end
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.isComplete)
    let kept = try #require(stats.category(named: "Malloc 1008 Bytes"))
    #expect(kept.persistentCount == 10)
    #expect(kept.persistentBytes == 10_000)
    #expect(kept.totalCount == 10)
    // The last RSS sample, taken after the main thread had gone, holds at least the live blocks
    // (/proc/self/statm reads all zeros then)
    let lastRSS = try #require(stats.totals.lastRSSBytes)
    #expect(lastRSS >= stats.totals.liveBytes, "last RSS \(lastRSS) B")
    let report = try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil)
    #expect(report.scan.trigger == .exit)
    // The worker's 4 blocks of 24 bytes that nothing points to, as memcheck finds them: the
    // scan reads the calling thread's maps (/proc/self's are empty once the main thread has gone)
    #expect(report.definitelyLost == LeakAmount(blocks: 4, bytes: 96))
  }

  @Test func aHandlerThatAllocatesWhileSignalsFloodAnAllocatingThreadNeverWaitsForever() throws {
    // Given a thread whose tcache-only loop is flooded with signals whose handler allocates in
    // other size classes (which untraced never waits for a lock): a handler's free that landed
    // in the shim was done later with signals open, and the next handler waited for the arena
    // lock it held (about 3 runs in 4 hung)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("sigstorm", in: dir)
    for run in 1...6 {
      let trace = dir.appendingPathComponent("storm-\(run).trace").path
      // (A run's time is a race between the loop and the storm: from 0.5 s to 20 s, debug)
      let result = try record(["--no-leaks", "-o", trace, "--", program, "100000"], seconds: 90)
      // Then every run ends, with the loop's blocks all recorded
      #expect(result.status == 0, "run \(run): \(result.stderr)")
      #expect(result.stdout == "done\n", "run \(run)")
      let stats = try Statistics(reader: TraceReader(path: trace))
      #expect(stats.category(named: "Malloc 32 Bytes")?.totalCount == 100_001, "run \(run)")
    }
  }

  @Test(arguments: ["new", "unwound", "returning", "exec", "stdio"])
  func aThreadCancelledBeforeItsFirstAllocationIsCancelledWhereItWouldBeUntraced(mode: String)
    throws
  {
    // Given 20 threads, each with a cancel pending when it first allocates: its first malloc
    // took a new buffer of the shim's, which opens the memory file, or came from a frame that
    // only libunwind unwinds, which writes to a pipe. Both are cancellation points: the thread
    // was cancelled inside the shim, holding a lock that the next thread waited for, or its
    // own buffer, which its exit waited for (every run hung). A thread that then returned
    // without a cancellation point was cancelled in its exit's write of its buffer, under the
    // file's lock (every run hung), and one that exec'd a file that cannot run was cancelled
    // in the exec's probe of the file (20 of 20). One cancelled inside a write to stderr left
    // its lock taken, as glibc's cleanup ran through libunwind's _Unwind_ functions, which the
    // preload library brought before libgcc's (the next write hung)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("cancelfirst", in: dir)
    let trace = dir.appendingPathComponent("cancel-\(mode).trace").path
    let result = try record(["--no-leaks", "-o", trace, "--", program, mode, "20"])
    // Then each thread is cancelled at its own pthread_testcancel, after its block was
    // recorded, or, with none, not at all
    #expect(result.status == 0, "\(result.stderr)")
    let untraced = mode == "returning" || mode == "exec" ? 0 : 20
    #expect(result.stdout == "canceled \(untraced) of 20\n")
    if mode == "stdio" { #expect(result.stderr.hasPrefix("stderr is free\n")) }
    guard mode != "exec" else { return }  // each failed exec began the trace again
    let stats = try Statistics(reader: TraceReader(path: trace))
    let blocks = try #require(stats.category(named: "Malloc 1008 Bytes"))
    #expect(blocks.totalCount == 20)
    #expect(blocks.persistentCount == 0)
  }

  @Test func aThreadWithACancelPendingThatCallsExitEndsTheProcess() throws {
    // Given a thread with a cancel pending that allocates, then calls exit(5), with the leak
    // scan at exit on: exit is no cancellation point, but the scan's were, and the thread was
    // cancelled inside it, so that the process went on and ended with its main's status, 0
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("cancelfirst", in: dir)
    let trace = dir.appendingPathComponent("cancel-exit.trace").path
    let result = try record(["-o", trace, "--", program, "exit", "1"])
    // Then the process ends as untraced, with the thread's status and nothing printed
    #expect(result.status == 5, "\(result.stderr)")
    #expect(result.stdout == "")
    #expect(try TraceReader(path: trace).trailer?.endReason == .exited)
  }

  @Test func threadsWhoseFirstCallIsPthreadGetattrNpOnThemselvesRunToTheirEnd() throws {
    // Given 8 threads whose first call asks glibc for their own attributes, which allocates
    // while it holds the thread's lock (every thread of Rust's standard library does this): the
    // shim asked pthread_getattr_np too, from that allocation, and waited for the lock forever
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("getattr", in: dir)
    var totals: [Int: AllocationTotals] = [:]
    for threads in [4, 8] {
      let untraced = try Harness.run("/usr/bin/timeout", ["-k", "5", "30", program, "\(threads)"])
      #expect(untraced.status == 0)
      let trace = dir.appendingPathComponent("getattr-\(threads).trace").path
      let result = try record(["--no-leaks", "-o", trace, "--", program, "\(threads)"])
      // Then the program ends as it does untraced
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == untraced.stdout)
      totals[threads] = try Statistics(reader: TraceReader(path: trace)).totals
    }
    // And each thread's allocations are recorded: glibc's pthread_getattr_np makes and frees
    // three blocks (its attributes' extension and CPU set), so 4 threads more make 12 more
    let four = try #require(totals[4])
    let eight = try #require(totals[8])
    #expect(eight.allocationCount - four.allocationCount == 12)
    #expect(eight.freeCount - four.freeCount == 12)
  }
}

/// Polls `probe` every 2 ms until it gives a value or `seconds` pass.
func waitFor<T>(seconds: Double, _ probe: () throws -> T?) rethrows -> T? {
  let deadline = Date().addingTimeInterval(seconds)
  repeat {
    if let value = try probe() { return value }
    usleep(2_000)
  } while Date() < deadline
  return nil
}
