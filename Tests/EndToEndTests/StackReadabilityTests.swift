import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Readable stacks on real programs: the first frame shown is the user's, Swift names are
/// simplified, paths are relative to the project, and the report ranks, merges and trims as
/// asked. The fixtures' functions allocate known blocks (Fixtures/stacks.c, Fixtures/nodes.swift).
@Suite("Readable stacks", .serialized)
struct StackReadabilityTests {
  /// Records Fixtures/stacks.c and returns the trace's path.
  static func recordStacks(in directory: URL) throws -> String {
    let program = try Harness.fixture("stacks", in: directory)
    let trace = directory.appendingPathComponent("stacks.trace").path
    let recorded = try Harness.heapline(["record", "-o", trace, "--", program])
    guard recorded.status == 0 else { throw HarnessError("record failed: \(recorded.stderr)") }
    return trace
  }

  /// Compiles Fixtures/stacks.c to `program` with `flags` (`-DPADDED` moves its functions).
  static func buildStacks(_ flags: [String], to program: String) throws {
    let source = Harness.fixtures.appendingPathComponent("stacks.c").path
    let result = try Harness.run(
      "/usr/bin/env", ["cc", "-g", "-O0"] + flags + ["-o", program, source])
    guard result.status == 0 else { throw HarnessError("cc failed: \(result.stderr)") }
  }

  /// The lines of `text` from the one starting with `prefix`, `count` of them.
  static func lines(_ text: String, from prefix: String, count: Int) -> [String] {
    let all = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let start = all.firstIndex(where: { $0.hasPrefix(prefix) }) else { return [] }
    return Array(all[start..<min(all.count, start + count)])
  }

  @Test("a C stack starts at the caller of malloc and stops at main, paths under --root relative")
  func cStacksShowUserFramesOnly() throws {
    let directory = try Harness.temporaryDirectory()
    let trace = try Self.recordStacks(in: directory)
    let report = try Harness.heapline([
      "report", trace, "--top", "2", "--root", Harness.fixtures.path,
    ])
    #expect(report.status == 0)
    #expect(
      Self.lines(report.stdout, from: "  [1]", count: 7) == [
        "  [1] 3,000 B at peak; 3,000 B live in 3 blocks at end; 3 allocations, 3,000 B total",
        "      #0 make_big  stacks.c:18  (stacks)",
        "      #1 main  stacks.c:37  (stacks)",
        "",
        "  [2] 480 B at peak; 480 B live in 10 blocks at end; 10 allocations, 480 B total",
        "      #0 leaf_alloc  stacks.c:7  (stacks)",
        "      #1 make_small  stacks.c:10  (stacks)",
      ])
    // With --all-frames, the frames below main come back: glibc's start and _start.
    let all = try Harness.heapline(["report", trace, "--top", "1", "--all-frames"])
    let frames = Self.lines(all.stdout, from: "  [1]", count: 6).dropFirst()
    #expect(
      frames.map { $0.split(separator: " ").dropFirst().first.map(String.init) } == [
        "make_big", "main", "__libc_start_call_main", "__libc_start_main", "_start",
      ])
  }

  @Test("--sort, --by function and --categories rank, merge and trim with exact figures")
  func reportRanksMergesAndTrims() throws {
    let directory = try Harness.temporaryDirectory()
    let trace = try Self.recordStacks(in: directory)
    let root = ["--root", Harness.fixtures.path]
    let temporary = try Harness.heapline(
      ["report", trace, "--sort", "temporary", "--top", "1"] + root)
    #expect(
      Self.lines(temporary.stdout, from: "Top 1 of", count: 5) == [
        "Top 1 of 4 allocation stacks, by temporary allocations", "",
        "  [1] 200 B at peak; 0 B live in 0 blocks at end; 5 allocations, 1,000 B total,"
          + " 5 temporary",
        "      #0 churn  stacks.c:24  (stacks)",
        "      #1 main  stacks.c:38  (stacks)",
      ])
    let count = try Harness.heapline(["report", trace, "--sort", "count", "--top", "1"] + root)
    #expect(
      Self.lines(count.stdout, from: "  [1]", count: 2)[1]
        == "      #0 leaf_alloc  stacks.c:7  (stacks)")
    // leaf_alloc's two stacks (10 and 4 blocks of 48 bytes) merge into one function.
    let merged = try Harness.heapline(
      ["report", trace, "--by", "function", "--sort", "leaked", "--top", "2"] + root)
    #expect(
      Self.lines(merged.stdout, from: "Top 2 of", count: 7) == [
        "Top 2 of 3 allocating functions, by bytes leaked (live at the end)", "",
        "  [1] 3,000 B at peak; 3,000 B live in 3 blocks at end; 3 allocations, 3,000 B total;"
          + " from 1 stack",
        "      #0 make_big  stacks.c  (stacks)", "",
        "  [2] 672 B at peak; 672 B live in 14 blocks at end; 14 allocations, 672 B total;"
          + " from 2 stacks",
        "      #0 leaf_alloc  stacks.c  (stacks)",
      ])
    let bogus = try Harness.heapline(["report", trace, "--sort", "size"])
    #expect(bogus.status == 64)
    #expect(
      bogus.stderr.split(separator: "\n").first.map(String.init)
        == "heapline: The value 'size' is invalid for '--sort <sort>'. Please provide one of"
        + " 'peak', 'allocated', 'count', 'temporary' or 'leaked'.")
    let trimmed = try Harness.heapline(["report", trace, "--categories", "1"])
    #expect(
      Self.lines(trimmed.stdout, from: "Categories", count: 4).dropFirst(2) == [
        "  Malloc 1008 Bytes             3,000             3            0        3,000        3",
        "  … and 2 more: 672 persistent bytes, 1,672 total bytes",
      ])
  }

  @Test("JSON keeps every frame, marking the hidden ones, and objects' top_frame is the user's")
  func jsonMarksHiddenFramesAndObjectsNameTheUserFrame() throws {
    let directory = try Harness.temporaryDirectory()
    let trace = try Self.recordStacks(in: directory)
    let json = try Harness.heapline(["report", trace, "--format", "json", "--top", "1"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let stacks = try #require(object["top_stacks"] as? [[String: Any]])
    let frames = try #require(stacks.first?["frames"] as? [[String: Any]])
    #expect(
      frames.map { "\($0["function"] as? String ?? "?"):\($0["hidden"] as? String ?? "shown")" }
        == [
          "make_big:shown", "main:shown", "__libc_start_call_main:process_start",
          "__libc_start_main:process_start", "_start:process_start",
        ])
    let csv = try Harness.heapline(["objects", trace, "--root", Harness.fixtures.path])
    let rows = csv.stdout.split(whereSeparator: \.isNewline).dropFirst().map {
      $0.split(separator: ",", omittingEmptySubsequences: false)
    }
    var byFrame: [String: Int] = [:]
    for row in rows where row.count == 9 { byFrame["\(row[7]) \(row[8])", default: 0] += 1 }
    #expect(
      byFrame == [
        "leaf_alloc stacks.c:7": 14, "make_big stacks.c:18": 3, "churn stacks.c:24": 5,
      ])
  }

  @Test("Swift frames are simplified, thunks and the runtime's allocation frames hidden")
  func swiftNamesAreSimplified() throws {
    let directory = try Harness.temporaryDirectory()
    let program = directory.appendingPathComponent("nodes").path
    let source = Harness.fixtures.appendingPathComponent("nodes.swift").path
    let built = try Harness.run(
      "/usr/bin/env", ["swiftc", "-g", "-Onone", "-module-name", "nodes", "-o", program, source])
    try #require(built.status == 0, "\(built.stderr)")
    let trace = directory.appendingPathComponent("nodes.trace").path
    let recorded = try Harness.heapline(["record", "-o", trace, "--", program])
    try #require(recorded.status == 0, "\(recorded.stderr)")
    let root = ["--root", Harness.fixtures.path]
    let csv = try Harness.heapline(["objects", trace, "--category", "nodes.Node"] + root)
    let frames = csv.stdout.split(whereSeparator: \.isNewline).dropFirst().map {
      $0.split(separator: ",").suffix(2).joined(separator: " ")
    }
    #expect(frames == Array(repeating: "closure #1 in makeNodes(count:) nodes.swift:8", count: 25))
    // The report: the 25 objects' stack, simplified, then in full; no line over 160 columns.
    let report = try Harness.heapline(["report", trace, "--sort", "count", "--top", "200"] + root)
    let lines = report.stdout.split(separator: "\n").map(String.init)
    let start = try #require(lines.firstIndex { $0.contains("25 allocations, 600 B total") })
    #expect(
      Array(lines[start + 1...start + 4]) == [
        "      #0 closure #1 in makeNodes(count:)  nodes.swift:8  (nodes)",
        "      #1 Collection.map<A, B>(_:)  (nodes)",
        "      #2 makeNodes(count:)  nodes.swift:8  (nodes)",
        "      #3 main  nodes.swift:12  (nodes)",
      ])
    #expect(lines.allSatisfy { $0.count <= 160 })
    #expect(!report.stdout.contains("swift_allocObject") && !report.stdout.contains("thunk"))
    let full = try Harness.heapline(
      ["report", trace, "--sort", "count", "--top", "200", "--full-names"] + root)
    #expect(
      full.stdout.contains(
        "      #2 nodes.makeNodes(count: Swift.Int) -> Swift.Array<nodes.Node>  nodes.swift:8"
          + "  (nodes)"))
  }

  @Test("without stored symbols, a rebuilt program is named once and keeps module+offset frames")
  func rebuiltProgramsAreNotMisnamed() throws {
    let directory = try Harness.temporaryDirectory()
    let program = directory.appendingPathComponent("rebuilt").path
    let build = { (flags: [String]) throws in try Self.buildStacks(flags, to: program) }
    try build([])
    let trace = directory.appendingPathComponent("rebuilt.trace").path
    let recorded = try Harness.heapline(["record", "--no-symbols", "-o", trace, "--", program])
    try #require(recorded.status == 0)
    // Unchanged, it is symbolized without a word.
    let before = try Harness.heapline(["report", trace, "--top", "1"])
    #expect(!before.stderr.contains("warning"))
    #expect(before.stdout.contains("      #0 make_big  "))
    try build(["-DPADDED"])
    let report = try Harness.heapline(["report", trace, "--top", "4"])
    #expect(report.status == 0)
    let warnings = report.stderr.split(separator: "\n").filter { $0.contains("warning") }
    #expect(
      warnings == [
        "heapline: warning: module '\(program)' was rebuilt since the recording (its build ID"
          + " differs): its frames are shown as module+offset, not symbolized"
      ])
    for name in ["make_big", "make_small", "make_more", "leaf_alloc", "churn", "main"] {
      #expect(!report.stdout.contains(" \(name) "), "\(name) named from the wrong build")
    }
    #expect(report.stdout.contains("      #0 rebuilt+0x"))
    // Gone altogether: said so, once, by the export too.
    try FileManager.default.removeItem(atPath: program)
    let folded = try Harness.heapline(["export", trace, "--format", "folded"])
    #expect(!folded.stdout.contains("make_big"))
    #expect(
      folded.stderr.split(separator: "\n").filter { $0.contains("warning") } == [
        "heapline: warning: module '\(program)' is gone or unreadable: its frames are shown as"
          + " module+offset, not symbolized"
      ])
  }

  @Test("symbols stored when recording ends name the frames after a rebuild, and after removal")
  func storedSymbolsSurviveARebuild() throws {
    let directory = try Harness.temporaryDirectory()
    let program = directory.appendingPathComponent("rebuilt").path
    let build = { (flags: [String]) throws in try Self.buildStacks(flags, to: program) }
    try build([])
    let trace = directory.appendingPathComponent("stored.trace").path
    let recorded = try Harness.heapline(["record", "-o", trace, "--", program])
    try #require(recorded.status == 0)
    try build(["-DPADDED"])
    let root = ["--root", Harness.fixtures.path]
    let expected = [
      "  [1] 3,000 B at peak; 3,000 B live in 3 blocks at end; 3 allocations, 3,000 B total",
      "      #0 make_big  stacks.c:18  (rebuilt)",
      "      #1 main  stacks.c:37  (rebuilt)",
    ]
    let rebuilt = try Harness.heapline(["report", trace, "--top", "1"] + root)
    #expect(Self.lines(rebuilt.stdout, from: "  [1]", count: 3) == expected)
    #expect(!rebuilt.stderr.contains("warning"))
    try FileManager.default.removeItem(atPath: program)
    let removed = try Harness.heapline(["report", trace, "--top", "1"] + root)
    #expect(Self.lines(removed.stdout, from: "  [1]", count: 3) == expected)
    #expect(!removed.stderr.contains("warning"))
  }

  @Test("a stack cut short for want of room in the stack table ends at a frame that says so")
  func aStackCutShortSaysSo() throws {
    // Given 1,100,000 calls of 16 bytes, each through a copy of its own of code made at run
    // time, two frames of their own each: more than the stack table holds (2,097,152). A cut
    // stack ended at its last frame kept, and took every deeper stack's allocations: a
    // tester's program charged 75 % of its allocations to a line of main that calls no malloc
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("lostframes", in: dir)
    let trace = dir.appendingPathComponent("lost.trace").path
    let result = try Harness.heapline([
      "record", "--no-leaks", "-o", trace, "--", program, "1100000",
    ])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "called 1100000\n")
    // Then every allocation of 16 bytes is counted, and those whose frames did not fit are
    // under the frame that says so, the stack that made most (never under main alone)
    let reader = try TraceReader(path: trace)
    #expect((reader.trailer?.stackFramesCut ?? 0) > 0)
    var options = StatisticsOptions(topStackCount: 1)
    options.stackOrder = .count
    let stats = try Statistics(reader: reader, options: options)
    #expect(stats.category(named: "Malloc 16 Bytes")?.totalCount == 1_100_001)
    let top = try #require(stats.topStacks.first)
    #expect(top.frames.first == SymbolizedFrame.lostFramesPC)
    #expect(top.totalBytes == 16 * top.allocationCount)
    #expect(top.allocationCount > 10_000 && top.allocationCount < 1_100_001)
    // And a stack stored before the table filled is found whole after it did (it was cut:
    // the table said it was full before it looked), under one marker at most
    options.stackOrder = .allocated
    let byBytes = try Statistics(reader: reader, options: options)
    let known = try #require(byBytes.topStacks.first)
    #expect(known.allocationCount == 5)
    #expect(known.totalBytes == 5 * (16 << 20))
    #expect(known.frames.first != SymbolizedFrame.lostFramesPC)
    // And no marker stands under another: a stack that shared a cut stack's frames down to
    // the one that did not fit resumed under its marker and was cut there again
    var stream = reader.events()
    try stream.drainMetadata()
    let nodes = stream.metadata.stackNodes
    let nested = nodes.values.filter {
      $0.pc == SymbolizedFrame.lostFramesPC && nodes[$0.parent]?.pc == SymbolizedFrame.lostFramesPC
    }
    #expect(nested.isEmpty)
    #expect(nodes.values.contains { $0.pc == SymbolizedFrame.lostFramesPC })
    let report = try Harness.heapline(["report", trace, "--no-symbolize", "--top", "3"])
    #expect(report.stdout.contains("      #0 (frames lost: the stack table was full)\n"))
  }
}
