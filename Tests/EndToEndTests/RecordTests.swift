import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record` on real C programs whose allocations the tests know exactly.
@Suite struct RecordTests {
  func statistics(_ trace: URL) throws -> Statistics {
    try Statistics(reader: TraceReader(path: trace.path))
  }

  @Test func blocksFromAKnownFunctionAreExactAndTheProgramPassesThrough() throws {
    // Given a program that makes 1,000 blocks of 48 bytes in make_blocks() and frees 400
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    // When it is recorded, with input on stdin and exit status 7
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--", program, "1000", "48", "400", "7"], stdin: "hi\n")
    // Then its output, input and status pass through untouched
    #expect(result.status == 7)
    #expect(result.stdout == "stdin said: hi\nmade 1000 blocks of 48 bytes, freed 400\n")
    #expect(result.stderr.contains("trace written to \(trace.path)"))
    // And the trace holds exactly those blocks
    let stats = try statistics(trace)
    let blocks = try #require(stats.category(named: "Malloc 48 Bytes"))
    #expect(blocks.persistentCount == 600)
    #expect(blocks.persistentBytes == 28_800)
    #expect(blocks.transientCount == 400)
    #expect(blocks.totalBytes == 48_000)
    // The peak is the moment the last block was made: 1,000 × 48 bytes and the 8,000-byte
    // pointer array; stdio's buffers come only later.
    #expect(stats.totals.peakLiveBytes == 48_000 + 8_000)
    #expect(stats.trace.isComplete)
  }

  @Test func chunksWithoutStacksAreFlaggedAndSkippingThemLosesNoStack() throws {
    // Given a program whose main thread makes 2,000,000 blocks from one stack and frees them
    // all, so that all of its chunks but three hold no stack or module: the first (start-up's
    // stacks), the last of its events (stdio's stacks) and the exit's leak scan
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    _ = try Harness.heapline(
      ["record", "--no-symbols", "-o", trace.path, "--", program, "2000000", "48", "2000000", "0"])
    let reader = try TraceReader(path: trace.path)
    // Then the shim flags those chunks
    let main = reader.chunks.filter { $0.kind == .events && $0.threadSerial == 1 }
    let flagged = main.filter { $0.flags.contains(.noStacksOrModules) }
    #expect(main.count >= 5)
    #expect(flagged.count >= main.count - 3)
    // And a full read finds no other record in a flagged chunk (the decoder rejects one), and
    // the stacks read past the flagged chunks are all the trace's stacks
    var events = reader.events()
    var allocations = 0
    while let event = try events.next() { if case .alloc = event { allocations += 1 } }
    #expect(allocations >= 2_000_001)
    let skipping = try reader.stacksAndModules(of: reader.chunks)
    #expect(skipping.returnAddresses == Set(events.metadata.stackNodes.values.map(\.pc)))
    #expect(skipping.modules == events.metadata.modules)
  }

  @Test func aLoopOfTwoMillionPairsTakesAFewKilobytes() throws {
    // Given a loop of 2,000,000 malloc/free pairs in four sizes by turns
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("loop", in: dir)
    let trace = dir.appendingPathComponent("loop.trace")
    let result = try Harness.heapline(
      ["record", "--no-symbols", "-o", trace.path, "--", program, "2000000"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the trace keeps every pair, with each block's address and its time to the
    // millisecond, in a few bits: its 4,000,000 events (30 MB as version 4 wrote them, before
    // compression) take less than 16 KiB, not 1 bit an event
    let size = try #require(
      try FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int)
    #expect(size < 16 * 1024)
    // 16 bytes, 24 and 32 (the 32-byte class), 40 (the 48-byte class)
    let stats = try statistics(trace)
    for (name, count) in [
      ("Malloc 16 Bytes", 500_000), ("Malloc 32 Bytes", 1_000_000), ("Malloc 48 Bytes", 500_000),
    ] {
      let category = try #require(stats.category(named: name))
      #expect(category.totalCount == count, "\(name)")
      #expect(category.persistentCount == 0, "\(name)")
    }
  }

  @Test func theTopStackIsSymbolizedToTheAllocatingLine() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    _ = try Harness.heapline(["record", "-o", trace.path, "--", program, "500", "64", "0", "0"])
    // When the report is printed
    let report = try Harness.heapline(["report", trace.path, "--top", "1"])
    #expect(report.status == 0)
    // Then the top stack is the malloc in make_blocks, with its file and line, called from main
    let source = try String(
      contentsOf: Harness.fixtures.appendingPathComponent("blocks.c"), encoding: .utf8)
    let line = try #require(
      source.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
        $0.contains("BLOCKS_MALLOC_LINE")
      })
    #expect(report.stdout.contains("make_blocks"))
    #expect(report.stdout.contains("blocks.c:\(line + 1)"))
    #expect(report.stdout.contains("main"))
    #expect(report.stdout.contains("32,000"))  // 500 × 64 bytes at the peak
  }

  @Test func everyMemberOfTheMallocFamilyIsRecordedExactly() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("family", in: dir)
    let trace = dir.appendingPathComponent("family.trace")
    let result = try Harness.heapline(["record", "-o", trace.path, "--", program])
    #expect(result.status == 0)
    let totals = try statistics(trace).totals
    // 12 allocations (realloc counts as a free and an allocation), 5 frees
    #expect(totals.allocationCount == 12)
    #expect(totals.freeCount == 5)
    let allocated: [UInt64] = [100, 200, 400, 50, 240, 3_000, 5_000, 128, 33, 77]
    #expect(totals.allocatedBytes == allocated.reduce(0, +))
    // Live: 50 (realloc chain) + 240 (calloc) + 3 × 1,000 (aligned) + 128 + 77
    #expect(totals.liveBytes == 3_495)
    #expect(totals.liveBlocks == 7)
  }

  @Test func everyMemberOfTheMallocFamilyIsAttributedToTheLineThatCalledIt() throws {
    // Given the family fixture, whose main makes each allocation itself, recorded with every
    // stack also taken by libunwind
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("family", in: dir)
    let trace = dir.appendingPathComponent("family.trace").path
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program],
      environment: ["HEAPLINE_VERIFY_UNWIND": "1"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the stacks that the wrappers' entry points started from are libunwind's, all 12
    #expect(result.stderr.contains("unwind check: 12 stacks, 0 left to libunwind, 0 differed"))
    // And each allocation's first frame, with none left out, is main at the line of its call:
    // malloc, realloc × 3, calloc, aligned_alloc, memalign, posix_memalign, valloc,
    // reallocarray, malloc, realloc(NULL, 77)
    let objects = try Harness.heapline(["objects", "--all-frames", trace])
    #expect(objects.status == 0)
    let rows = objects.stdout.split(whereSeparator: \.isNewline).dropFirst()
      .map { $0.split(separator: ",", omittingEmptySubsequences: false) }
    #expect(rows.map { String($0[7]) } == Array(repeating: "main", count: 12))
    #expect(
      rows.map { $0[8].split(separator: ":").last.map(String.init) ?? "" }
        == ["8", "9", "10", "11", "13", "15", "16", "18", "20", "21", "23", "25"])
  }

  @Test func fourThreadsLeaveExactlyTheBlocksTheyKept() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("threads", in: dir)
    let trace = dir.appendingPathComponent("threads.trace")
    #expect(try Harness.heapline(["record", "-o", trace.path, "--", program]).status == 0)
    let stats = try statistics(trace)
    for (index, size) in [32, 64, 96, 128].enumerated() {
      let category = try #require(stats.category(named: "Malloc \(size) Bytes"), "thread \(index)")
      // 10,000 made, 9,900 freed by the thread itself, 50 by its neighbour: 50 stay
      #expect(category.persistentCount == 50)
      #expect(category.persistentBytes == UInt64(50 * size))
      #expect(category.transientCount == 9_950)
    }
  }

  @Test func aThreadRecordingAloneThenBesideAnotherThenAfterAForkLosesAndDoublesNothing() throws {
    // Given a main thread that allocates alone for 1.2 s, while leak scans stop it every 20 ms
    // and the shim flushes its buffer, then beside a second thread, then after a fork whose
    // child allocates
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("alone", in: dir)
    let trace = dir.appendingPathComponent("alone.trace")
    let result = try Harness.heapline(
      ["record", "--leaks-every", "0.02", "-o", trace.path, "--", program])
    #expect(result.status == 0)
    let rounds = try #require(Int(result.stdout.split(separator: " ").first ?? ""))
    #expect(rounds > 0)
    // Then every phase's blocks are there exactly: one in a hundred kept, the rest freed
    let stats = try statistics(trace)
    #expect(stats.trace.isComplete)
    for (size, made) in [(48, rounds * 1_000), (80, 100_000), (112, 100_000), (144, 50_000)] {
      let category = try #require(stats.category(named: "Malloc \(size) Bytes"), "\(size) B")
      #expect(category.persistentCount == UInt64(made / 100), "\(size) B")
      #expect(category.persistentBytes == UInt64(made / 100 * size), "\(size) B")
      #expect(category.transientCount == UInt64(made - made / 100), "\(size) B")
    }
    // And the child's blocks are not
    #expect(stats.category(named: "Malloc 3.00 KiB") == nil)
    #expect(stats.trace.lostEvents.total == 0)
  }

  @Test func aForkedChildNeitherRecordsNorCorruptsTheParentsTrace() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("forker", in: dir)
    let trace = dir.appendingPathComponent("forker.trace")
    #expect(try Harness.heapline(["record", "-o", trace.path, "--", program]).status == 0)
    let stats = try statistics(trace)
    #expect(stats.trace.isComplete)
    #expect(stats.totals.allocationCount == 10)
    #expect(stats.totals.liveBytes == 10_000)
    #expect(stats.category(named: "Malloc 3.00 KiB") == nil)
  }

  @Test func aProgramKilledBySIGKILLLosesNothingRecorded() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("killed", in: dir)
    let trace = dir.appendingPathComponent("killed.trace")
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--", program], environment: ["HEAPLINE_SAMPLE_MS": "50"])
    #expect(result.status == 128 + 9)
    // heapline finished the trace from the shim's shared buffers: every allocation is there
    #expect(result.stderr.contains("before the shim could finish the trace"))
    let stats = try statistics(trace)
    #expect(stats.trace.isComplete)
    #expect(stats.trace.endReason == .endedUnfinished)
    #expect(stats.totals.allocationCount == 200)
    #expect(stats.totals.liveBytes == 200 * 512)
  }

  @Test func aLibraryLoadedAndClosedAtOnceIsStillNamed() throws {
    // Given a library that a host dlopens, calls and dlcloses within a millisecond or so
    let dir = try Harness.temporaryDirectory()
    let library = dir.appendingPathComponent("libplugin.so").path
    let built = try Harness.run(
      "/usr/bin/env",
      ["cc", "-g", "-shared", "-fPIC", "-o", library, Harness.fixtures.appendingPathComponent("plugin.c").path])
    try #require(built.status == 0, "\(built.stderr)")
    let host = try Harness.fixture("pluginhost", in: dir)
    let trace = dir.appendingPathComponent("plugin.trace")
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace.path, "--", host, library])
    #expect(result.status == 0)
    // Its 100 blocks are there, and their frames are named from the library's symbols
    let stats = try statistics(trace)
    #expect(stats.category(named: "Malloc 4.00 KiB")?.persistentCount == 100)
    #expect(stats.modules.contains { $0.path == library })
    let report = try Harness.heapline(["report", trace.path, "--root", Harness.fixtures.path])
    #expect(report.stdout.contains("#0 plugin_make  plugin.c:4  (libplugin.so)"))
  }

  @Test func depthLimitsEveryStack() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("depth.trace")
    _ = try Harness.heapline(
      ["record", "-o", trace.path, "--depth", "2", "--", program, "10", "16", "0", "0"])
    let stats = try Statistics(
      reader: TraceReader(path: trace.path), options: StatisticsOptions(topStackCount: 100))
    #expect(!stats.topStacks.isEmpty)
    #expect(stats.topStacks.allSatisfy { $0.frames.count <= 2 })
  }
}
