import Foundation
import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// Leak scans in traces (LEAK_SCAN, LEAK_BLOCK, LEAK_EDGE) and their report: classification,
/// root leaks and cycles, grouping, suppressions. The scan is made up here, so every figure is
/// known; the end-to-end tests check what real scans find.
@Suite("Leak scans and leak reports")
struct LeakAnalysisTests {
  static let viewController = CategoryID(0x400)
  static let store = CategoryID(0x401)
  static let context = CategoryID(0x402)

  static func block(
    _ counter: UInt64, size: UInt64, stack: UInt64, category: CategoryID? = nil,
    _ reachability: LeakedBlock.Reachability = .unreachable
  ) -> LeakedBlock {
    LeakedBlock(
      id: AllocID(threadSerial: 1, counter: counter), address: Address(0x10_000 + counter * 0x100),
      size: size, stack: StackID(stack),
      category: category ?? CategoryID(UInt64(SizeClass(containing: size).index)),
      reachability: reachability)
  }

  /// The blocks, by index:
  /// - 0 → 1 → 2 → 0: a view controller, its store and a closure context (a cycle), and 3, a
  ///   64-byte block that the store holds (indirectly lost);
  /// - 4 → 5 → 6: a list of 48-byte nodes (one root leak, two indirect);
  /// - 7 and 8: two 40-byte blocks from one stack (one leak, twice);
  /// - 9 → 10: possibly lost (something points into 9's middle);
  /// - 11 → 12 ⇄ 13: a root leak that holds a cycle, which is then indirectly lost;
  /// - 14 → 14: an 80-byte block that points to itself (a cycle of one).
  static func scan() -> LeakScan {
    var scan = LeakScan(
      id: 1, time: 5_000, trigger: .api, threadsStopped: 2, liveBlocks: 100, liveBytes: 9_000,
      rootBytes: 4_096, stopNanoseconds: 700, totalNanoseconds: 900)
    scan.blocks = [
      block(10, size: 200, stack: 1, category: viewController),
      block(11, size: 232, stack: 2, category: store),
      block(12, size: 168, stack: 3, category: context),
      block(13, size: 64, stack: 4),
      block(20, size: 48, stack: 5), block(21, size: 48, stack: 6), block(22, size: 48, stack: 6),
      block(30, size: 40, stack: 7), block(31, size: 40, stack: 7),
      block(40, size: 110, stack: 8, .onlyThroughInteriorPointers),
      block(41, size: 16, stack: 8, .onlyThroughInteriorPointers),
      block(50, size: 32, stack: 9), block(51, size: 32, stack: 9), block(52, size: 32, stack: 9),
      block(60, size: 80, stack: 10),
    ]
    scan.edges = [
      (0, 1), (1, 2), (2, 0), (1, 3), (4, 5), (5, 6), (9, 10), (11, 12), (12, 13), (13, 12),
      (14, 14),
    ].map { LeakEdge(from: $0.0, to: $0.1) }
    scan.edges.append(LeakEdge(from: 1, to: 2, isInterior: true))  // a second pointer, into it
    return scan
  }

  /// The scan in a trace, whose stacks 1 to 3 (the cycle's) are in libui.so, the rest in
  /// libapp.so (neither exists: frames get module offsets only).
  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter(header: TraceHeader(pid: 3))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.category(viewController, kind: .swiftClass, name: "App.ViewController")
    chunk.category(store, kind: .swiftClass, name: "App.Store")
    chunk.category(context, kind: .closureContext, name: "Swift closure context")
    chunk.module(
      TraceModule(
        path: "/no/such/libui.so", loadBias: 0, segments: [.init(start: 0x1000, size: 0x3000)]))
    chunk.module(
      TraceModule(
        path: "/no/such/libapp.so", loadBias: 0, segments: [.init(start: 0x4000, size: 0x8000)]))
    for stack: UInt64 in 1...10 {
      chunk.stack(StackID(stack), parent: .empty, pc: 0x1000 * stack + 8)
    }
    chunk.leakScan(scan())
    writer.append(chunk)
    return try TemporaryTrace(writer)
  }

  @Test func scanRecordsRoundTrip() throws {
    let trace = try Self.trace()
    let (_, metadata) = try trace.events()
    let read = try #require(metadata.leakScans[1])
    var expected = Self.scan()
    expected.announcedBlocks = 15
    expected.announcedEdges = 12
    #expect(read == expected)
    #expect(read.isComplete)
  }

  @Test func blocksAreClassifiedAndGroupedIntoRootLeaksAndCycles() throws {
    let trace = try Self.trace()
    let report = try LeakReport.read(path: trace.path, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount(blocks: 8, bytes: 840))
    #expect(report.indirectlyLost == LeakAmount(blocks: 5, bytes: 224))
    #expect(report.possiblyLost == LeakAmount(blocks: 2, bytes: 126))
    // Largest first; equal sizes by kind (cycle before root), then name
    #expect(
      report.groups.map(\.name) == [
        "ViewController → Store → closure context → ViewController", "Malloc 48 Bytes",
        "Malloc 112 Bytes", "Malloc 32 Bytes", "Malloc 80 Bytes → Malloc 80 Bytes",
        "Malloc 48 Bytes",
      ])
    #expect(
      report.groups.map(\.kind) == [.cycle, .rootLeak, .possiblyLost, .rootLeak, .cycle, .rootLeak])
    let cycle = report.groups[0]
    #expect(cycle.members.map(\.size) == [200, 232, 168])
    #expect(cycle.definitelyLost == LeakAmount(blocks: 3, bytes: 600))
    #expect(cycle.indirectlyLost == LeakAmount(blocks: 1, bytes: 64))
    let list = report.groups[1]
    #expect(list.definitelyLost == LeakAmount(blocks: 1, bytes: 48))
    #expect(list.indirectlyLost == LeakAmount(blocks: 2, bytes: 96))
    #expect(report.groups[2].possiblyLost == LeakAmount(blocks: 2, bytes: 126))
    // The cycle that a root leak holds is part of that leak, not a leaked cycle of its own
    #expect(report.groups[3].definitelyLost == LeakAmount(blocks: 1, bytes: 32))
    #expect(report.groups[3].indirectlyLost == LeakAmount(blocks: 2, bytes: 64))
    #expect(report.groups[4].definitelyLost == LeakAmount(blocks: 1, bytes: 80))
    // Two leaks of the same size from the same stack: one group, two instances
    #expect(report.groups[5].instances == 2)
    #expect(report.groups[5].definitelyLost == LeakAmount(blocks: 2, bytes: 80))
    #expect(report.hasLeaks)
  }

  @Test func aLostRingOfAHundredThousandBlocksIsOneCycleWithAShortNameAndItsFirstMembers() throws {
    // Given a scan that found a ring of 100,000 blocks of 16 bytes, each pointing to the next
    let count = 100_000
    var scan = LeakScan(id: 1, time: 5_000, trigger: .exit, liveBlocks: UInt64(count))
    scan.blocks = (0..<count).map { Self.block(UInt64($0), size: 16, stack: 1) }
    scan.edges = (0..<count).map { LeakEdge(from: $0, to: ($0 + 1) % count) }
    var writer = TraceWriter(header: TraceHeader(pid: 3))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.stack(StackID(1), parent: .empty, pc: 0x1008)
    chunk.leakScan(scan)
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    // When it is grouped
    let report = try LeakReport.read(path: trace.path, symbolizer: nil)
    // Then it is one cycle, all of it definitely lost, named by its first four members and its
    // last two, and keeping the first 256 members with a count of the rest
    #expect(report.groups.count == 1)
    let ring = try #require(report.groups.first)
    #expect(ring.kind == .cycle)
    #expect(ring.definitelyLost == LeakAmount(blocks: UInt64(count), bytes: UInt64(16 * count)))
    let name =
      Array(repeating: "Malloc 16 Bytes", count: 4) + ["… 99,994 more"]
      + Array(repeating: "Malloc 16 Bytes", count: 3)
    #expect(ring.name == name.joined(separator: " → "))
    #expect(ring.members.count == 256)
    #expect(ring.membersLeftOut == count - 256)
    #expect(ring.members.map(\.id.counter) == Array(0..<256))
    #expect(
      LeakTextRenderer().render(report).contains(
        "  … and 99,744 more blocks it starts at, not shown"))
    let json =
      try JSONSerialization.jsonObject(
        with: Data(LeakJSONRenderer().render(report).utf8)) as? [String: Any]
    let group = try #require((json?["groups"] as? [[String: Any]])?.first)
    #expect((group["members"] as? [Any])?.count == 256)
    #expect(group["members_left_out"] as? Int == 99_744)
  }

  @Test func aScanMissingSomeOfItsRecordsIsIncomplete() throws {
    let trace = try Self.trace()
    let (_, metadata) = try trace.events()
    // As when the process died while the scan's records were written
    var scan = try #require(metadata.leakScans[1])
    scan.announcedEdges += 1
    #expect(!scan.isComplete)
    let report = LeakReport(scan: scan, metadata: metadata, path: trace.path, symbolizer: nil)
    #expect(LeakTextRenderer().render(report).contains("Scan INCOMPLETE"))
  }

  @Test func aRotatedFilesScanIsNumberedAmongTheScansItHolds() throws {
    // Given a file of a rotated recording that holds its scans 9 to 17: the header said
    // "scan 17 of 9", and asking for scan 1 said the file's scans were 1 to 17
    var writer = TraceWriter(header: TraceHeader(pid: 3))
    var chunk = writer.makeChunk(threadSerial: 1)
    for id: UInt64 in 9...17 {
      var scan = Self.scan()
      scan.id = id
      chunk.leakScan(scan)
    }
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let report = try LeakReport.read(path: trace.path, symbolizer: nil)
    #expect(
      LeakTextRenderer().render(report).hasPrefix(
        "Leaks in '\(trace.path)': scan 17 (this file holds scans 9 to 17), made"))
    #expect(
      throws: AnalysisError.invalidOption(
        "trace '\(trace.path)' has no leak scan 1 (its scans: 9 to 17)")
    ) {
      try LeakReport.read(path: trace.path, scan: 1, symbolizer: nil)
    }
  }

  @Test func leaksAreKeptOrLeftOutWhole() {
    let scan = Self.scan()
    // Block 12 is in the cycle that root 11 holds: that leak, and nothing else
    let held = scan.onlyLeaksInvolving { $0.id.counter == 51 }
    #expect(held.blocks.map(\.id.counter) == [50, 51, 52])
    #expect(
      held.edges == [LeakEdge(from: 0, to: 1), LeakEdge(from: 1, to: 2), LeakEdge(from: 2, to: 1)])
    #expect(held.isComplete)
    // Block 3 hangs from the view controller's cycle: the cycle comes with it
    let cycle = scan.onlyLeaksInvolving { $0.id.counter == 13 }
    #expect(cycle.blocks.map(\.id.counter) == [10, 11, 12, 13])
    #expect(cycle.edges.count == 5)
    #expect(scan.onlyLeaksInvolving { _ in false }.blocks.isEmpty)
  }

  @Test func longListsAndCyclesNeedNoRecursion() {
    let count = 200_000  // recursion this deep would overflow a thread's stack
    let list = LeakGraph(nodeCount: count, edges: (0..<count - 1).map { ($0, $0 + 1) })
    #expect(list.componentCount == count)
    #expect(list.sourceComponents == [list.component(of: 0)])
    let ring = LeakGraph(nodeCount: count, edges: (0..<count).map { ($0, ($0 + 1) % count) })
    #expect(ring.componentCount == 1)
    #expect(ring.isCycle(0))
    #expect(ring.shortestCycle(through: 5).count == count)
  }

  @Test func aCycleThroughOtherBlocksIsNamedBeforeABlocksPointerToItself() {
    // A task that points into itself and to a slab that points back; a block alone with a
    // pointer to itself
    let graph = LeakGraph(nodeCount: 3, edges: [(0, 0), (0, 1), (1, 0), (2, 2)])
    #expect(graph.shortestCycle(through: 0) == [0, 1])
    #expect(graph.shortestCycle(through: 2) == [2])
    #expect(graph.isCycle(graph.component(of: 2)))
  }

  @Test func suppressionsMatchFunctionsModulesAndFiles() throws {
    let rules = try LeakSuppressions(
      text: """
        # comments and blank lines are skipped

        leak:function=make_*
        leak:module=libcache.so
        leak:file=vendor/*.c
        leak:parse_config
        """, source: "test.supp")
    #expect(rules.rules.map(\.field) == [.function, .module, .file, .any])
    let frame = { (function: String?, module: String?, file: String?) in
      SymbolizedFrame(pc: 1, function: function, file: file, modulePath: module)
    }
    #expect(
      rules.match([frame("main", "/bin/app", "app.c"), frame("make_cache", nil, nil)])
        == "leak:function=make_*")
    #expect(rules.match([frame("f", "/usr/lib/libcache.so", nil)]) == "leak:module=libcache.so")
    #expect(rules.match([frame("f", nil, "/src/vendor/zlib.c")]) == nil)  // file name only: zlib.c
    #expect(rules.match([frame("f", nil, "vendor/zlib.c")]) == "leak:file=vendor/*.c")
    #expect(rules.match([frame("parse_config", nil, nil)]) == "leak:parse_config")
    #expect(rules.match([frame("main", "/bin/app", "app.c")]) == nil)
  }

  @Test(arguments: [
    ("leak:function=f\nfoo\n", "line 2: a suppression starts with 'leak:'"),
    ("leak:colour=red", "line 1: the field must be function, module or file"),
    ("\n\nleak:function=", "line 3: the pattern is empty"),
  ])
  func malformedSuppressionsNameTheirLine(text: String, message: String) {
    #expect(throws: AnalysisError.self) { try LeakSuppressions(text: text, source: "bad.supp") }
    do {
      _ = try LeakSuppressions(text: text, source: "bad.supp")
    } catch {
      #expect(error.description.contains("suppressions 'bad.supp' \(message)"))
    }
  }

  @Test func suppressedGroupsAreCountedApart() throws {
    let trace = try Self.trace()
    // The cycle's stacks are in libui.so: only that group goes
    let ui = try LeakSuppressions(text: "leak:module=libui.so", source: "ui.supp")
    let report = try LeakReport.read(path: trace.path, suppressions: ui, symbolizer: nil)
    #expect(report.groups.count == 5)
    #expect(report.suppressedGroups.map(\.suppressedBy) == ["leak:module=libui.so"])
    #expect(report.suppressed == LeakAmount(blocks: 4, bytes: 664))
    #expect(report.definitelyLost == LeakAmount(blocks: 5, bytes: 240))
    // Every stack is in one of the two modules: nothing is left
    let both = try LeakSuppressions(text: "leak:module=lib*.so", source: "both.supp")
    let none = try LeakReport.read(path: trace.path, suppressions: both, symbolizer: nil)
    #expect(!none.hasLeaks)
    #expect(none.suppressed == LeakAmount(blocks: 15, bytes: 1_190))
  }
}
