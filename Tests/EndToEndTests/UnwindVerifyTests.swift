import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// The shim's table-driven unwinder against libunwind: with HEAPLINE_VERIFY_UNWIND=1 every stack
/// is taken by both, libunwind's is the one recorded, and the shim says on stderr how many it
/// checked, how many the table left to libunwind, and how many came out differently.
@Suite struct UnwindVerifyTests {
  struct Check: Equatable {
    var stacks: UInt64
    var leftToLibunwind: UInt64
    var differed: UInt64
  }

  /// Records `command` with the check on and returns what the shim reported, with the trace's
  /// statistics.
  static func record(
    _ command: [String], environment: [String: String] = [:], stdin: String = ""
  ) throws -> (Harness.Result, Check, Statistics) {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("unwind.trace")
    var env = environment
    env["HEAPLINE_VERIFY_UNWIND"] = "1"
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--"] + command, stdin: stdin, environment: env)
    let lines = result.stderr.split(separator: "\n").filter {
      $0.hasPrefix("heapline: unwind check: ")
    }
    guard lines.count == 1 else {
      throw HarnessError("expected one unwind check line, got: \(result.stderr)")
    }
    let numbers = lines[0].split(whereSeparator: { !$0.isNumber }).compactMap { UInt64($0) }
    guard numbers.count == 3 else { throw HarnessError("unreadable check: \(lines[0])") }
    let check = Check(stacks: numbers[0], leftToLibunwind: numbers[1], differed: numbers[2])
    return (result, check, try Statistics(reader: TraceReader(path: trace.path)))
  }

  @Test(arguments: ["-O0", "-O2"])
  func deepStacksFromTwoThreadsUnwindAlikeAndTheTableNeedsNoHelp(optimization: String) throws {
    // Given 300 blocks of 777 B made 0 to 99 calls deep, by two threads, built both ways
    let dir = try Harness.temporaryDirectory()
    let program = dir.appendingPathComponent("deepstacks").path
    let source = Harness.fixtures.appendingPathComponent("deepstacks.c").path
    let cc = try Harness.run(
      "/usr/bin/env", ["cc", "-g", optimization, "-o", program, source, "-lpthread"])
    try #require(cc.status == 0, "cc failed: \(cc.stderr)")
    let (result, check, stats) = try Self.record([program])
    #expect(result.status == 0)
    // Then every allocation's stack was checked: the 300, and the one pthread_create makes
    let blocks = try #require(stats.category(named: "Malloc 784 Bytes"))
    #expect(blocks.totalCount == 300)
    #expect(blocks.totalBytes == 300 * 777)
    #expect(stats.totals.allocationCount == 301)
    #expect(check == Check(stacks: 301, leftToLibunwind: 0, differed: 0))
  }

  @Test func codeMadeAtRunTimeWithAFramePointerIsUnwoundByTheTableAsLibunwindUnwindsIt() throws {
    // Given code that a program made at run time (as a JIT does: no module's, no CFI), keeping
    // a frame pointer, that calls malloc 100 times for 48 bytes: every such stack went to
    // libunwind, whose checks of each word it reads (a system call each) made node's worker
    // threads record at 13 times their untraced time
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("jitcall", in: dir)
    let (result, check, stats) = try Self.record([program])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "ok\n")
    // Then the table follows the frame pointer through it to main, as libunwind does, and
    // leaves no stack to libunwind
    let blocks = try #require(stats.category(named: "Malloc 48 Bytes"))
    #expect(blocks.totalCount == 100)
    #expect(check.leftToLibunwind == 0)
    #expect(check.differed == 0)
    let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
    let made = stats.topStacks.filter { $0.totalBytes == 4800 }
    #expect(made.count == 1)
    #expect(made.first.map { report.frames(of: $0).contains { $0.function == "main" } } == true)
  }

  @Test func aScanThatStopsAThreadWhileLibunwindRunsOnTheShimsStackScansTheThreadsOwn() throws {
    // Given two threads that hold 1,000 blocks each on their stacks and replace them one at a
    // time for 2 s, with libunwind taking every stack (on a stack of the shim's) and a scan
    // every 10 ms: a scan that stopped a thread there scanned no frame of its own stack, and
    // called its blocks lost (thousands of them, in 4 scans of 155)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("stackheld", in: dir)
    let trace = dir.appendingPathComponent("held.trace").path
    let result = try Harness.heapline(
      ["record", "--leaks-every", "0.01", "-o", trace, "--", program, "2"],
      environment: ["HEAPLINE_VERIFY_UNWIND": "1"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "ok\n")
    // Then no scan calls a block lost
    var stream = try TraceReader(path: trace).events()
    try stream.drainMetadata()
    let scans = stream.metadata.leakScans.values
    #expect(scans.count >= 20)
    let wrong = scans.filter { $0.blocks.contains { $0.reachability == .unreachable } }
    #expect(wrong.map(\.id).sorted() == [])
  }

  @Test func aLibraryLoadedWhereAnotherWasUnloadedIsUnwoundWithItsOwnRules() throws {
    // Given two builds of one library whose frames differ in size at the same return addresses,
    // loaded, called (100 blocks of 3,000 B each time) and unloaded in turn: small, big, small
    let dir = try Harness.temporaryDirectory()
    let source = Harness.fixtures.appendingPathComponent("reframe.c").path
    for (name, frame) in [("small", 200), ("big", 4000)] {
      let cc = try Harness.run(
        "/usr/bin/env",
        [
          "cc", "-g", "-O2", "-shared", "-fPIC", "-DFRAME=\(frame)", "-o",
          dir.appendingPathComponent("\(name).so").path, source,
        ])
      try #require(cc.status == 0, "cc failed: \(cc.stderr)")
    }
    let host = try Harness.fixture("reloader", in: dir)
    let libraries = ["small", "big", "small"].map { dir.appendingPathComponent("\($0).so").path }
    let (result, check, stats) = try Self.record([host] + libraries)
    #expect(result.status == 0)
    // The loader gave each the same addresses, so the old rules would have been wrong
    let bases = result.stdout.split(separator: "\n")
    try #require(bases.count == 3 && Set(bases).count == 1, "loaded at \(bases)")
    let blocks = try #require(stats.category(named: "Malloc 3.00 KiB"))
    #expect(blocks.totalCount == 300)
    #expect(blocks.totalBytes == 300 * 3000)
    #expect(check == Check(stacks: stats.totals.allocationCount, leftToLibunwind: 0, differed: 0))
  }

  @Test func theBlocksFixtureUnwindsAlike() throws {
    // Given 1,000 blocks of 48 B, the calloc that holds them, and stdio's two buffers
    let program = try Harness.fixture("blocks", in: try Harness.temporaryDirectory())
    let (result, check, stats) = try Self.record([program, "1000", "48", "10", "0"], stdin: "hi\n")
    #expect(result.status == 0)
    #expect(stats.category(named: "Malloc 48 Bytes")?.totalCount == 1000)
    #expect(stats.totals.allocationCount == 1003)
    #expect(check == Check(stacks: 1003, leftToLibunwind: 0, differed: 0))
  }

  @Test(arguments: [["-O0"], ["-O2", "-fomit-frame-pointer"]])
  func stacksThatTakeTurnsAtOneMallocAreEachTheirOwn(flags: [String]) throws {
    // Given three paths that take turns to reach one malloc at the same depth and stack pointer,
    // and differ only three frames out from it, 1,000 blocks of 40 B each (Fixtures/turns.c:
    // the shim keeps the last stacks taken from each place, and must tell these apart by all of
    // their frames)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("turns", in: dir, flags: flags)
    let (result, check, stats) = try Self.record([program, "1000"])
    #expect(result.status == 0)
    #expect(stats.totals.allocationCount == 3000)
    #expect(check == Check(stacks: 3000, leftToLibunwind: 0, differed: 0))
    // And recorded without the check, each path has its own 1,000 blocks
    let trace = dir.appendingPathComponent("turns.trace").path
    let recorded = try Harness.heapline([
      "record", "--no-leaks", "-o", trace, "--", program, "1000",
    ])
    #expect(recorded.status == 0)
    let folded = try Harness.heapline([
      "export", "--format", "folded", "--weight", "allocated", trace,
    ])
    #expect(
      folded.stdout.split(separator: "\n").sorted() == [
        "main;outer1;mid;get 40000", "main;outer2;mid;get 40000", "main;outer3;mid;get 40000",
      ])
  }

  @Test(arguments: [[], ["apart"]])
  func chainsThatPutMallocsCallerAtOnePlaceAreToldApartByTheirSavedFramePointers(
    arguments: [String]
  ) throws {
    // Given two call chains whose frames that call malloc land at the same stack address, the
    // first chain's return addresses still lying in the second one's alloca area, in turns with
    // another stack between them, or one right after the other (Fixtures/allocaframes.c; a
    // hostile test found the kept stacks, and before them the reuse of the previous stack,
    // took the second chain for the first: both checked return addresses, not saved rbp)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture(
      "allocaframes", in: dir, flags: ["-fno-omit-frame-pointer", "-fno-inline"])
    let (result, check, stats) = try Self.record([program] + arguments)
    #expect(result.stdout == "same 1\n")
    let apart = !arguments.isEmpty
    #expect(stats.totals.allocationCount == (apart ? 7 : 13))  // and stdout's buffer
    #expect(check == Check(stacks: apart ? 7 : 13, leftToLibunwind: 0, differed: 0))
    // And recorded without the check, each chain has its own three blocks
    let trace = dir.appendingPathComponent("frames.trace").path
    let recorded = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program] + arguments)
    #expect(recorded.status == 0)
    let folded = try Harness.heapline([
      "export", "--format", "folded", "--weight", "allocated", trace,
    ])
    let chains = folded.stdout.split(separator: "\n").filter { !$0.contains("printf") }.sorted()
    #expect(
      chains == ["main;a;b;f1;f0 3333", "main;c;f1;f0 6666"] + (apart ? [] : ["main;g 1998"]))
  }

  @Test func fourThreadsUnwindAlike() throws {
    // Given four threads of 10,000 blocks each, and pthread_create's one block per thread
    let program = try Harness.fixture("threads", in: try Harness.temporaryDirectory())
    let (result, check, stats) = try Self.record([program])
    #expect(result.status == 0)
    #expect(stats.totals.allocationCount == 40_004)
    #expect(check == Check(stacks: 40_004, leftToLibunwind: 0, differed: 0))
  }

  @Test func python3UnwindsAlike() throws {
    let python = "/usr/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: python) else { return }
    // Given Debian's CPython on malloc, holding 5 bytearrays of 3,000,000 B among its own blocks
    let script = """
      import json
      kept = [bytearray(3_000_000) for _ in range(5)]
      rows = json.loads(json.dumps([{"id": i, "name": str(i)} for i in range(2000)]))
      print(len(kept), len(rows))
      """
    let (result, check, stats) = try Self.record(
      [python, "-c", script], environment: ["PYTHONMALLOC": "malloc"])
    #expect(result.status == 0)
    #expect(result.stdout == "5 2000\n")
    #expect(stats.category(named: "Malloc 3.00 MiB")?.totalCount == 5)
    #expect(check.stacks == stats.totals.allocationCount)
    #expect(check.differed == 0)
  }

  @Test func sqlite3UnwindsAlike() throws {
    let sql = """
      create table t(x, y); insert into t values (1, 'a'), (2, 'b'), (3, 'c');
      create index i on t(y); select sum(x) from t where y > 'a';
      """
    let (result, check, stats) = try Self.record(["sqlite3", ":memory:", sql])
    #expect(result.status == 0)
    #expect(result.stdout == "5\n")
    #expect(check.stacks == stats.totals.allocationCount)
    #expect(check.differed == 0)
  }

  @Test func aSwiftProgramUnwindsAlike() throws {
    // Given the demo, which keeps 20,000 LogRecord objects
    let demo = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("heapline-demo").path
    let (result, check, stats) = try Self.record([demo])
    #expect(result.status == 0)
    #expect(stats.category(named: "heapline_demo.LogRecord")?.persistentCount == 20_000)
    #expect(check.stacks == stats.totals.allocationCount)
    #expect(check.differed == 0)
  }
}
