import Foundation
import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// A scan's reachability graph (LEAK_GRAPH, LEAK_ROOT, LEAK_NODE) and the retainer paths made
/// from it. The graph is made up here, so every path is known; RetainersEndToEndTests checks
/// what real scans keep.
@Suite struct RetainersTests {
  static let image = CategoryID(0x500)
  static let cache = CategoryID(0x501)

  /// Roots: 0 a global in libapp.so (no symbols: named by module offset), 1 thread 42's stack.
  /// Nodes: 0 the cache, held at 0x4010 in the global; 1 and 2 images held by the cache's
  /// fields at +0x18 and +0x20; 3 and 4 images held from the stack; 5 a 48-byte block the
  /// cache holds at +0x18 too; 6 an image that block holds at +0x18.
  static func scan() -> LeakScan {
    var scan = LeakScan(id: 1, time: 5_000, trigger: .api)
    var graph = ReachabilityGraph()
    graph.roots = [
      .init(kind: .global, start: 0x4000, end: 0x5000),
      .init(kind: .stack, thread: 42, start: 0x7000, end: 0x8000),
    ]
    func node(_ n: UInt64, _ category: CategoryID, _ parent: ReachabilityGraph.Parent, _ at: UInt64)
      -> ReachabilityGraph.Node
    {
      .init(
        id: AllocID(threadSerial: 1, counter: n), address: Address(0x10_000 + n * 0x100),
        size: category == image ? 24 : 48, stack: StackID(1), category: category,
        parent: parent, offset: at)
    }
    graph.nodes = [
      node(0, cache, .root(0), 0x4010), node(1, image, .node(0), 0x18),
      node(2, image, .node(0), 0x20), node(3, image, .root(1), 0x7f00),
      node(4, image, .root(1), 0x7f48), node(5, CategoryID(3), .node(0), 0x18),
      node(6, image, .node(5), 0x18),
    ]
    graph.announcedRoots = 2
    graph.announcedNodes = 7
    scan.graph = graph
    // And two images that no root reaches: one lost, one possibly lost
    scan.blocks = [
      LeakedBlock(
        id: AllocID(threadSerial: 1, counter: 7), address: Address(0x20_000), size: 24,
        stack: StackID(1), category: image, reachability: .unreachable),
      LeakedBlock(
        id: AllocID(threadSerial: 1, counter: 8), address: Address(0x20_100), size: 24,
        stack: StackID(1), category: image, reachability: .onlyThroughInteriorPointers),
    ]
    scan.announcedBlocks = 2
    return scan
  }

  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter(header: TraceHeader(pid: 3))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.category(image, kind: .swiftClass, name: "App.Image")
    chunk.category(cache, kind: .swiftClass, name: "App.Cache")
    chunk.module(
      TraceModule(
        path: "/no/such/libapp.so", loadBias: 0, segments: [.init(start: 0x4000, size: 0x1000)]))
    chunk.leakScan(scan())
    writer.append(chunk)
    return try TemporaryTrace(writer)
  }

  @Test func graphRecordsRoundTrip() throws {
    let (_, metadata) = try Self.trace().events()
    let read = try #require(metadata.leakScans[1]?.graph)
    #expect(read == Self.scan().graph)
    #expect(read.isComplete)
    #expect(read.path(to: 6) == (root: 0, nodes: [0, 5, 6]))
  }

  @Test func identicalPathsAreGroupedMostObjectsFirst() throws {
    let trace = try Self.trace()
    let report = try Retainers.read(path: trace.path, category: "App.Image", symbolizer: nil)
    #expect(report.objects == 5)
    #expect(report.bytes == 120)
    let paths = report.paths.map { path in
      ([RetainersRenderer.describe(path.root)]
        + path.steps.map { "\($0.category) +0x\(String($0.offset, radix: 16))" })
        .joined(separator: " → ") + " ×\(path.count)"
    }
    // The stack's two images are one path; the cache's fields and the block's are apart
    #expect(
      paths == [
        "stack of thread 42 ×2",
        "global libapp.so+0x4010 → App.Cache +0x18 ×1",
        "global libapp.so+0x4010 → App.Cache +0x20 ×1",
        "global libapp.so+0x4010 → App.Cache +0x18 → Malloc 48 Bytes +0x18 ×1",
      ])
  }

  @Test func aPathOfMoreThan32StepsShowsItsFirstAndLast16AndCountsTheRest() throws {
    // Given a list of 100 images reachable from a global, each held by the one before at +0x10
    var scan = LeakScan(id: 1, time: 5_000, trigger: .api)
    var graph = ReachabilityGraph()
    graph.roots = [.init(kind: .global, start: 0x4000, end: 0x5000)]
    for n in 0..<100 {
      let parent: ReachabilityGraph.Parent = n == 0 ? .root(0) : .node(n - 1)
      let offset: UInt64 = n == 0 ? 0x4010 : 0x10
      let address = Address(0x10_000 + UInt64(n) * 0x100)
      graph.nodes.append(
        ReachabilityGraph.Node(
          id: AllocID(threadSerial: 1, counter: UInt64(n)), address: address, size: 24,
          stack: StackID(1), category: Self.image, parent: parent, offset: offset))
    }
    scan.graph = graph
    // When its paths are made
    let report = Retainers(
      scan: scan, category: "App.Image",
      metadata: try Self.trace().events().1, path: "list.trace", symbolizer: nil)
    // Then each object has its own path; the 67 of more than 32 steps show 32 and count the rest
    #expect(report.objects == 100)
    #expect(report.paths.count == 100)
    let long = report.paths.filter { $0.stepsLeftOut > 0 }
    #expect(long.count == 67)
    #expect(long.allSatisfy { $0.steps.count == 32 && $0.steps.allSatisfy { $0.offset == 0x10 } })
    #expect(Set(long.map(\.stepsLeftOut)) == Set(1...67))
    #expect(
      report.paths.filter { $0.stepsLeftOut == 0 }.map(\.steps.count).sorted() == Array(0...32))
    let text = RetainersRenderer(format: .text).render(report)
    #expect(text.contains("  → App.Image +0x10\n  → … 67 more steps\n  → App.Image +0x10\n"))
    let json =
      try JSONSerialization.jsonObject(
        with: Data(RetainersRenderer(format: .json).render(report).utf8)) as? [String: Any]
    let listed = try #require(json?["paths"] as? [[String: Any]])
    #expect(
      listed.compactMap { $0["steps_left_out"] as? Int }.sorted() == Array(repeating: 0, count: 33)
        + Array(1...67))
    #expect(listed.allSatisfy { ($0["steps"] as? [Any])?.count ?? -1 <= 32 })
  }

  @Test func theObjectsNoRootReachesAreCountedAndSentToLeaks() throws {
    let trace = try Self.trace()
    let images = try Retainers.read(path: trace.path, category: "App.Image", symbolizer: nil)
    #expect(images.unreached == 2)
    let text = RetainersRenderer(format: .text).render(images)
    #expect(
      text.contains(
        "\n2 more objects that no root reaches, lost or possibly lost: `heapline leaks` shows them\n"
      ))
    let cache = try Retainers.read(path: trace.path, category: "App.Cache", symbolizer: nil)
    #expect(cache.unreached == 0)
    #expect(!RetainersRenderer(format: .text).render(cache).contains("no root reaches"))
  }

  @Test func aTraceWithoutAGraphOrCategoryOrScanIsAnError() throws {
    let trace = try Self.trace()
    #expect(throws: AnalysisError.unknownCategory("App.Nothing", path: trace.path)) {
      try Retainers.read(path: trace.path, category: "App.Nothing", symbolizer: nil)
    }
    #expect(
      throws: AnalysisError.invalidOption(
        "trace '\(trace.path)' has no leak scan 2 (its scans: 1 to 1)")
    ) {
      try Retainers.read(path: trace.path, category: "App.Image", scan: 2, symbolizer: nil)
    }
    let graphless = try LeakAnalysisTests.trace()
    #expect(
      throws: AnalysisError.invalidOption(
        "trace '\(graphless.path)' holds no leak scan with a graph (record with --graph)")
    ) {
      try Retainers.read(path: graphless.path, category: "App.Store", symbolizer: nil)
    }
  }
}
