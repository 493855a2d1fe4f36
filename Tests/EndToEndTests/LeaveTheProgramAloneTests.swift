import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// What the traced program sees of Heapline: its own environment, its own descriptors, and
/// files it writes that stay its own.
@Suite struct LeaveTheProgramAloneTests {
  @Test(arguments: ["/lib/x86_64-linux-gnu/libm.so.6", "", " /lib/x86_64-linux-gnu/libm.so.6 "])
  func theProgramSeesNoneOfHeaplinesVariables(preload: String) throws {
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("look.trace").path
    // Given a preload of the user's own, which must stay, alone and as it was: empty, or with
    // spaces (an empty one went missing, and spaces were taken off)
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "look"],
      environment: ["LD_PRELOAD": preload])
    #expect(result.status == 0)
    let variables = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      .filter { $0.hasPrefix("env ") }
    #expect(variables == ["env LD_PRELOAD=\(preload)"])
    // And the recording happened
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 1008 Bytes")?.totalCount == 5000)
  }

  @Test func aProgramAnExecStartsSeesTheProgramsOwnVariablesInTheirOrder() throws {
    // Given a program that execs another, with a variable of the user's own named HEAPLINE_MINE
    // and LD_PRELOAD among others: the exec dropped every HEAPLINE_ variable, and put
    // LD_PRELOAD last
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("endings", in: dir)
    let environment = ["HEAPLINE_MINE": "keep", "LD_PRELOAD": ""]
    let untraced = try Harness.run(program, ["exec", program, "look"], environment: environment)
    let trace = dir.appendingPathComponent("exec.trace").path
    let traced = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "exec", program, "look"],
      environment: environment)
    #expect(traced.status == 0, "\(traced.stderr)")
    // Then the program after the exec sees them as untraced, in the same order
    func variables(_ output: String) -> [String] {
      output.split(separator: "\n").filter { $0.hasPrefix("env ") }.map(String.init)
    }
    #expect(variables(untraced.stdout).contains("env HEAPLINE_MINE=keep"))
    #expect(variables(traced.stdout) == variables(untraced.stdout))
  }

  @Test func aShellWithAnEnvironmentOfItsOwnPassesOnNoneOfHeaplinesVariables() throws {
    // Given bash, which defines getenv, setenv and unsetenv itself: the shim's unsetenv called
    // bash's, which does nothing before bash's main, and bash passed every HEAPLINE_* setting
    // and the shim's LD_PRELOAD on to the programs it ran
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("shell.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", "/bin/bash", "-c", "\"$0\" look; true", program],
      environment: ["LD_PRELOAD": ""])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the program bash forks and runs sees what it would untraced
    let variables = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
      .filter { $0.hasPrefix("env ") }
    #expect(variables == ["env LD_PRELOAD="])
  }

  @Test func theProgramsSignalDispositionsAreWhatTheyWouldBeUntraced() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let untraced = try Harness.run(program, ["dispositions"])
    let trace = dir.appendingPathComponent("signals.trace").path
    // With the exit leak scan, as by default: it stops the threads with ptrace, not a signal
    let traced = try Harness.heapline(["record", "-o", trace, "--", program, "dispositions"])
    #expect(traced.status == 0)
    #expect(traced.stdout == untraced.stdout)
    // A signal option installs the handler it asks for, and nothing else
    let marked = try Harness.heapline(
      ["record", "--mark-signal", "12", "-o", trace, "--", program, "dispositions"])
    #expect(marked.stdout == untraced.stdout + "signal 12 handled\n")
  }

  @Test func theProgramStartsWithTheSignalsBlockedThatItsParentBlocked() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("mask.trace").path
    // Given a parent that blocks SIGUSR1, SIGUSR2, SIGTERM and SIGRTMIN+1 before its exec
    let untraced = try Harness.run(program, ["blocking", program, "dispositions"])
    #expect(untraced.stdout.hasSuffix("blocked 10\nblocked 12\nblocked 15\nblocked 35\n"))
    // Then the program that record starts has them blocked too
    let traced = try Harness.run(
      program, ["blocking", Harness.heapline, "record", "-o", trace, "--", program, "dispositions"])
    #expect(traced.status == 0, "\(traced.stderr)")
    #expect(traced.stdout == untraced.stdout)
    // But for the signal an option asks it to take, whose handler is the shim's
    let marked = try Harness.run(
      program,
      [
        "blocking", Harness.heapline, "record", "--mark-signal", "12", "-o", trace, "--", program,
        "dispositions",
      ])
    #expect(
      marked.stdout
        == "signal 12 handled\n"
        + untraced.stdout.replacingOccurrences(of: "blocked 12\n", with: ""))
  }

  @Test func aProgramCanMoveIntoAUserNamespaceAsUntraced() throws {
    // Given a program that calls unshare(CLONE_NEWUSER), which the kernel refuses a process of
    // more than one thread: the shim's thread made every traced program one (EINVAL)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("userns", in: dir)
    let untraced = try Harness.run(program, [])
    let trace = dir.appendingPathComponent("userns.trace").path
    let traced = try Harness.heapline(["record", "-o", trace, "--", program])
    // Then it gets what it gets untraced (where the kernel allows user namespaces: "unshare ok")
    #expect(traced.status == 0)
    #expect(traced.stdout == untraced.stdout)
    // And the recording went on through it
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.trace.isComplete)
    #expect(stats.category(named: "Malloc 336 Bytes")?.totalCount == 100)
  }

  @Test func theShimsThreadSleepsBetweenItsSamplesInsteadOfPollingEveryTenMilliseconds() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("idle.trace").path
    // Given a program that sleeps for 2 s, recorded with the defaults (a sample every 100 ms)
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "idle"])
    #expect(result.status == 0)
    // Then the shim's one thread went to sleep about 20 times, once a sample (and once more
    // for each flush and the start), not the 200 of a thread that looked every 10 ms
    let wakes = result.stdout.split(separator: "\n").filter { $0.hasPrefix("wakes ") }
      .compactMap { Int($0.dropFirst(6)) }
    #expect(wakes.count == 1)
    #expect((wakes.first ?? .max) <= 40, "\(wakes)")
    // And it still sampled: about 20 RSS samples (a busy machine may make it miss a few)
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.trace.isComplete)
    #expect(stats.totals.rssSampleCount >= 10, "\(stats.totals.rssSampleCount)")
  }

  @Test func theShimsDescriptorsSitAtTheTopOfTheRangeCloseOnExec() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("fds.trace").path
    // Under a limit of 16 descriptors, the shim's must not take the program's low numbers
    func descriptors(_ command: String) throws -> Set<String> {
      let result = try Harness.run(
        "/bin/sh", ["-c", "ulimit -n 16; exec \(command)", Harness.heapline, trace, program])
      #expect(result.status == 0)
      // Numbers from 16 up are strays that the test runner's threads passed down
      return Set(
        result.stdout.split(separator: "\n").filter { $0.hasPrefix("fd ") }.map(String.init)
          .filter { Int($0.split(separator: " ")[1]) ?? 99 < 16 })
    }
    let untraced = try descriptors("\"$2\" look")
    // What the shim holds is in every listing; the shim's thread also opens /proc files for an
    // instant (its samples), which one listing may catch: three listings, and what all show
    let command = "\"$0\" record --no-leaks -o \"$1\" -- \"$2\" look"
    let traced = try descriptors(command).intersection(descriptors(command))
      .intersection(descriptors(command))
    // Untraced, the program holds none; traced, the shim holds the trace, libunwind's pipe
    // (two ends) and the main thread's status (the memory-warning thread's eventfd only when a
    // warning source is asked for), all among 12…15 and close-on-exec, so that every number
    // below is the program's
    #expect(untraced.isEmpty)
    let shims = traced.subtracting(untraced).map { $0.split(separator: " ") }
    #expect(shims.count == 4)
    for fields in shims {
      #expect((12...15).contains(Int(fields[1]) ?? 0), "\(fields)")
      #expect(fields[3] == "1", "\(fields)")
    }
  }

  @Test func aProgramThatClosesEveryDescriptorKeepsItsFileAndItsTrace() throws {
    // Given a program that closes every descriptor above 1, its stderr too, then opens a file
    // of its own (which takes number 2) and writes 20,000 lines while it allocates 20,000 blocks
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("closeall.trace").path
    let output = dir.appendingPathComponent("out.txt").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "closeall", output])
    #expect(result.status == 0)
    // Its file holds exactly its lines: none of the trace's chunks, nor the shim's notice that
    // it reopened the trace
    let text = try String(contentsOfFile: output, encoding: .utf8)
    #expect(text == (0..<20000).map { "line \($0)\n" }.joined())
    // And the trace holds every block, the shim having reopened it
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.endReason == .exited)
    #expect(reader.trailer?.flags.contains(.descriptorReopened) == true)
    let stats = try Statistics(reader: reader)
    #expect(stats.category(named: "Malloc 1008 Bytes")?.totalCount == 25000)
  }

  @Test func aProgramThatMovesItsTraceIsToldSoNotCalledUntraced() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("moved.trace").path
    let moved = dir.appendingPathComponent("elsewhere.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "rename", trace, moved])
    #expect(result.status == 0)
    #expect(result.stderr.contains("the trace was recorded, but '\(trace)' is no longer there"))
    #expect(!result.stderr.contains("did not load the preload library"))
    // The shim wrote on through its descriptor: the trace is whole where the program put it
    let stats = try Statistics(reader: TraceReader(path: moved))
    #expect(stats.category(named: "Malloc 1008 Bytes")?.totalCount == 6000)
  }

  @Test func aProgramThatClosesTheShimsDescriptorsAndTakesEveryOneUnderItsLimitKeepsItsTrace()
    throws
  {
    // Given a program that lowers its limit to 16 descriptors, closes every one above 2, opens
    // files until none is left, then allocates enough to fill the shim's buffer: the trace could
    // not be opened again, the write failed and every event was lost (exit status 125)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let untraced = try Harness.run(program, ["fdfull"])
    let trace = dir.appendingPathComponent("fdfull.trace").path
    let result = try Harness.heapline([
      "record", "--no-leaks", "-o", trace, "--", program, "fdfull",
    ])
    // Then it opens as many files as untraced, and the trace holds every block
    #expect(untraced.stdout == "opened 13\n")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == untraced.stdout)
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 1008 Bytes")?.totalCount == 400_000)
  }

  @Test func aProgramThatPutsItsFileOnTheTracesDescriptorAndEveryOtherKeepsItsFileWhole() throws {
    // Given a program that writes 1 MiB to a file, makes its soft descriptor limit its hard one
    // and puts the file on every number under it, the shim's too, and then allocates enough to
    // fill the shim's buffer: the trace cannot be opened again, and the failed write cut the
    // file it found on the trace's number, the program's, to the trace's length (625 B)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("stolen.trace").path
    let data = dir.appendingPathComponent("data.bin").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "stolen", data])
    // Then the recording says it stopped, and why
    #expect(result.status == 125, "\(result.stderr)")
    #expect(result.stderr.contains("trace write failed, recording stopped: Too many open files"))
    // And the program's file is what it wrote, byte for byte
    let bytes = try Data(contentsOf: URL(fileURLWithPath: data))
    #expect(bytes.count == 1 << 20)
    #expect(bytes.allSatisfy { $0 == UInt8(ascii: "A") })
  }

  @Test func aProgramThatTakesLibunwindsPipeForAFileOfItsOwnKeepsItsFileWhole() throws {
    // Given a program that puts a file of its own on libunwind's pipe once libunwind has made
    // it, and then allocates 1,000 times from a function only libunwind can unwind: libunwind
    // read a byte of the file and wrote one of memory into it at every check
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("unwindpipe", in: dir)
    let trace = dir.appendingPathComponent("unwindpipe.trace").path
    let data = dir.appendingPathComponent("data.bin").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, data])
    #expect(result.status == 0, "\(result.stderr)")
    // Then its file is what it wrote, and nothing moved its offset
    #expect(result.stdout == "offset 0\n")
    let bytes = try Data(contentsOf: URL(fileURLWithPath: data))
    #expect(bytes.count == 64 << 10)
    #expect(bytes.allSatisfy { $0 == UInt8(ascii: "A") })
    // And the recording says what it left out, and holds every allocation: 1,025 to 1,099
    // bytes, 75 of them, are the class of 1.25 KiB
    #expect(result.stderr.contains("the program took the descriptors of libunwind's pipe"))
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 1.25 KiB")?.totalCount == 75)
  }

  @Test func aProgramThatClosesLibunwindsPipeKeepsWholeStacks() throws {
    // Given a program that closes every descriptor above 2 once libunwind has made its pipe,
    // as a daemon does, and then allocates 100 blocks of 1,200 B through a function only
    // libunwind can unwind, called from outer(): libunwind makes a new pipe, and the check
    // that its pipe was not taken must let it (a closed pipe is not a taken one)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("unwindpipe", in: dir)
    let trace = dir.appendingPathComponent("closed.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "-"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(!result.stderr.contains("libunwind's pipe"))
    // Then the blocks' stack holds outer() and main, as libunwind walked it
    let stats = try Statistics(
      reader: TraceReader(path: trace), options: StatisticsOptions(topStackCount: 10))
    let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
    let stack = try #require(stats.topStacks.first { $0.totalBytes == 120_000 })
    let functions = report.frames(of: stack).map(\.function)
    #expect(functions.contains("outer") && functions.contains("main"), "\(functions)")
  }

  @Test func aProgramsSigprofHandlerKeepsItsFlagsAfterALeakScanBySignals() throws {
    // Given a program with a SIGPROF handler without SA_RESTART, whose threads a leak scan stops
    // with signals, as where ptrace is refused: the shim's handler took the signal's place, and
    // sigaction showed it, with SA_RESTART, and a read that SIGPROF interrupted restarted
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("sigprofscan", in: dir)
    let untraced = try Harness.run(program, [])
    let trace = dir.appendingPathComponent("sigprof.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program],
      environment: ["HEAPLINE_STOP_SIGNAL": "27"])
    // Then the program sees its own handler, and its read fails with EINTR, as untraced
    #expect(untraced.stdout == "handler mine 1 flags 0 usr1 1\nread -1 errno 4\n")
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == untraced.stdout)
    // And the scan ran, by signals
    let report = try LeakReport.read(path: trace, scan: nil, symbolizer: nil)
    #expect(report.scan.trigger == .api)
  }

  /// With the exit scan's ptrace, and with periodic scans by signals: the shim's thread left
  /// SIGPROF, the scan's stop signal, unblocked, so the kernel gave it the program's SIGPROF,
  /// whose default action ended the process (signal 27 after "got 10").
  @Test(arguments: [[:], ["HEAPLINE_STOP_SIGNAL": "27"]])
  func aProgramThatTakesSIGPROFWithSigwaitGetsIt(environment: [String: String]) throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("sigwaitprof", in: dir)
    let untraced = try Harness.run(program, [])
    #expect(untraced.stdout == "got 10\ngot 27\ngot 15\n")
    let trace = dir.appendingPathComponent("sigwait.trace").path
    let options = environment.isEmpty ? [] : ["--leaks-every", "0.01"]
    let traced = try Harness.heapline(
      ["record", "-o", trace] + options + ["--", program], environment: environment)
    #expect(traced.status == 0, "\(traced.stderr)")
    #expect(traced.stdout == untraced.stdout)
  }

  @Test func aProgramThatSetsAndTakesAwayItsSIGPROFHandlerStillTakesItWithSigwait() throws {
    // Given a program that sets a SIGPROF handler and takes it away, 300 times, each time then
    // sending SIGPROF to itself with it blocked: the shim's thread, which takes SIGPROF while
    // the program has a handler, was told late (a wake it cleared), took one with the
    // default action, and the process died of it (3 runs in 10); each sigaction took 4 ms
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("sigwaitprof", in: dir)
    let trace = dir.appendingPathComponent("toggle.trace").path
    let traced = try Harness.heapline(["record", "-o", trace, "--", program, "toggle"])
    // Then it takes every one, as untraced
    #expect(traced.status == 0, "\(traced.stderr)")
    #expect(traced.stdout == "taken 300\n")
  }

  @Test func errnoIsTheProgramsAcrossEveryAllocation() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("errno.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "errno"])
    #expect(result.status == 0)
    // And a posix_memalign that fails leaves errno as glibc's does (ENOMEM; it kept the old)
    let untraced = try Harness.run(program, ["errno"])
    #expect(untraced.stdout == "errno changed 0 times\nposix_memalign 12, errno 12\n")
    #expect(result.stdout == untraced.stdout)
  }

  @Test func alignedAllocTakesWhatGlibcTakes() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let untraced = try Harness.run(program, ["aligned"])
    #expect(untraced.stdout == "aligned ok\n")
    let trace = dir.appendingPathComponent("aligned.trace").path
    let traced = try Harness.heapline([
      "record", "--no-leaks", "-o", trace, "--", program, "aligned",
    ])
    #expect(traced.stdout == untraced.stdout)
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 112 Bytes")?.totalCount == 1)
  }

  @Test func aProgramWhoseEveryBlockIsAMappingOfItsOwnRunsAndIsRecorded() throws {
    // Given malloc told to map every block (MALLOC_MMAP_THRESHOLD_=0), which made the shim's
    // start read two blocks after freeing them, when free had unmapped them
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("mapped.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", program, "exit"],
      environment: ["MALLOC_MMAP_THRESHOLD_": "0"])
    // Then it runs to its end, with its blocks and its leak scan
    #expect(result.status == 0, "\(result.stderr)")
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 1008 Bytes")?.totalCount == 5000)
    #expect(try Harness.heapline(["leaks", trace]).status == 0)
  }

  @Test(arguments: [[], ["-DWATCH_BINDINGS"]])
  func aProgramRunUnderAnAuditLibraryStartsAndIsRecorded(flags: [String]) throws {
    // Given a program run with LD_AUDIT naming an audit library: the dynamic linker then loads
    // the preload library where only the static TLS block's surplus is left, and the shim's
    // 15 KiB of TLS (a signal handlers' queue) did not fit: the program could not start at all.
    // One that watches symbol bindings makes the dynamic linker call malloc before the C library
    // has set up the environment: the shim, finding no settings, turned itself off for good
    let dir = try Harness.temporaryDirectory()
    let audit = dir.appendingPathComponent("libaudit.so").path
    let cc = try Harness.run(
      "/usr/bin/env",
      ["cc", "-shared", "-fPIC"] + flags
        + ["-o", audit, Harness.fixtures.appendingPathComponent("audit.c").path])
    try #require(cc.status == 0, "\(cc.stderr)")
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("audit.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "300", "48", "100", "0"],
      environment: ["LD_AUDIT": audit])
    // Then it runs to its end and its 300 blocks of 48 B are in the trace, 100 of them freed
    #expect(result.status == 0, "\(result.stderr)")
    let stats = try Statistics(reader: TraceReader(path: trace))
    let blocks = try #require(stats.category(named: "Malloc 48 Bytes"))
    #expect(blocks.totalCount == 300)
    #expect(blocks.persistentCount == 200)
  }

  @Test func aSwiftProgramThatCrashesAtOnceHasEveryThreadInItsCrashReport() throws {
    // Given a Swift program that traps a millisecond into its run, whose runtime then suspends
    // every other thread with a signal to show its backtrace
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("crashatonce", ["-Onone"], in: dir)
    let trace = dir.appendingPathComponent("crash.trace").path
    for _ in 0..<3 {
      let result = try Harness.heapline(
        ["record", "--no-leaks", "-o", trace, "--", program], timeout: 120)
      // Then it dies of its trap, as untraced, and the shim's thread was there to suspend
      #expect(result.status == 128 + SIGILL)
      #expect(result.stderr.contains("Fatal error: at once, 5 made"))
      #expect(!result.stderr.contains("failed to suspend thread"), "\(result.stderr)")
      // And the trace recovered names its class, made a moment before the trap: it was named
      // at the shim's next housekeeping, half a second on ("Category 1025")
      let stats = try Statistics(reader: TraceReader(path: trace))
      #expect(stats.category(named: "crashatonce.Made")?.totalCount == 5)
    }
  }

  @Test func aProgramWhoseOwnFunctionsHaveTheShimsInternalNamesKeepsThemAndIsRecordedWhole() throws
  {
    // Given a program that exports its own hl_now, hl_map and hl_log (linked -rdynamic), which
    // come first in the dynamic lookup
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("namesakes", in: dir, flags: ["-rdynamic"])
    let trace = dir.appendingPathComponent("namesakes.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "100"])
    // Then the program's functions served the program alone: its output is its own line
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "made and freed 100 blocks of 40 bytes; hl_now says 7\n")
    // And the shim recorded every block with its own clock and memory: nothing lost
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.lostEvents == 0)
    let stats = try Statistics(reader: reader)
    let blocks = try #require(stats.category(named: "Malloc 48 Bytes"))
    #expect(blocks.totalCount == 100)
    #expect(blocks.totalBytes == 4000)
    #expect(blocks.persistentCount == 0)
  }

  @Test func thePreloadLibraryExportsTheFunctionsItWrapsAndTheCAPIAndNothingElse() throws {
    let preload = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("libheapline-preload.so").path
    let nm = try Harness.run("/usr/bin/env", ["nm", "-D", "--defined-only", preload])
    #expect(nm.status == 0, "\(nm.stderr)")
    let exported = Set(
      nm.stdout.split(separator: "\n").compactMap { $0.split(separator: " ").last })
    let wrapped: Set<Substring> = [
      "malloc", "free", "calloc", "realloc", "reallocarray", "memalign", "aligned_alloc",
      "posix_memalign", "valloc", "pvalloc", "execl", "execle", "execlp", "execv", "execve",
      "execveat", "execvp", "execvpe", "fexecve", "dlopen", "dlclose", "pipe", "pipe2",
      "sigaction", "unshare", "setns", "prctl", "close_range", "closefrom", "__cxa_atexit", "on_exit", "syscall",
    ]
    #expect(wrapped.isSubset(of: exported))
    #expect(exported.contains("heapline_start"))
    let others = exported.subtracting(wrapped).filter { !$0.hasPrefix("heapline_") }
    #expect(others.isEmpty, "\(others.count), such as \(others.sorted().prefix(8))")
  }
}
