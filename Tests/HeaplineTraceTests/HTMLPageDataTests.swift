import Foundation
import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// The data that `heapline view` embeds: the report's JSON as `report --format json` writes
/// it, a grid that gives `report --at` at every bucket end and generations over any range, and
/// call-tree stacks whose weights are exact, with an "other" row for the rest.
@Suite("The page's data, against the report and hand-made truth")
struct HTMLPageDataTests {
  static func pageData(_ trace: TemporaryTrace, options: HTMLPageOptions = HTMLPageOptions())
    throws -> (text: String, page: [String: Any])
  {
    let html = try HTMLPage.render(TraceReader(path: trace.path), options: options, symbolizer: nil)
    let text = try #require(HTMLPage.embeddedData(of: html))
    let object = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    return (text, try #require(object?["page"] as? [String: Any]))
  }

  @Test func thePageEmbedsTheReportExactlyAsReportFormatJSONWritesIt() throws {
    // Given 100 blocks of 48 B, 60 of them freed
    let trace = try StatisticsTests.hundredAllocationsSixtyFreed()
    // When its page is made, and its report as `report --format json --top 20 --no-symbolize`
    let (text, _) = try Self.pageData(trace)
    let statistics = try Statistics(contentsOf: trace.path, options: .init(topStackCount: 20))
    let json = try JSONReportRenderer().render(
      StatisticsReport(statistics: statistics, symbolizer: nil))
    // Then the page's report is that JSON, token for token
    #expect(text.hasPrefix("{\"report\":" + HTMLPage.compact(json) + ",\"page\":"))
    #expect(HTMLPage.compact(json).contains("\"peak_live_bytes\":4800"))
  }

  /// Blocks at known times over 1 ms, in buckets of 200 µs (10 steps of 100 µs, 2 a bucket):
  /// A 48 B at 50 µs, freed at 250 µs; B 48 B at 150 µs, freed at 650 µs; C 96 B at 450 µs,
  /// never freed; D 48 B at 900 µs, freed at 910 µs.
  static func knownTimes() throws -> TemporaryTrace {
    var writer = TraceWriter(header: TraceHeader(pid: 7))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.stack(StackID(1), parent: .empty, pc: 0x40_1000)
    let address = { (n: UInt64) in Address(0x10_0000 + n * 256) }
    let a = chunk.alloc(at: 50_000, size: 48, address: address(0), stack: StackID(1))
    let b = chunk.alloc(at: 150_000, size: 48, address: address(1), stack: StackID(1))
    chunk.free(at: 250_000, a)
    chunk.alloc(at: 450_000, size: 96, address: address(2), stack: StackID(1))
    chunk.free(at: 650_000, b)
    let d = chunk.alloc(at: 900_000, size: 48, address: address(3), stack: StackID(1))
    chunk.free(at: 910_000, d)
    writer.append(chunk)
    writer.appendTrailer(endTime: 1_000_000)
    return try TemporaryTrace(writer)
  }

  static let gridOptions = {
    var options = HTMLPageOptions()
    options.timelinePoints = 10
    options.bucketSteps = 2
    return options
  }()

  /// Per bucket end, what the grid says is live (bytes, blocks) and was allocated up to it.
  static func instants(_ grid: [String: Any]) throws -> [(live: Int, blocks: Int, total: Int)] {
    let buckets = try #require(grid["buckets"] as? Int)
    let cells = try #require(grid["cells"] as? [Int])
    return (0..<buckets).map { b in
      var figures = (live: 0, blocks: 0, total: 0)
      for k in stride(from: 0, to: cells.count, by: 5) where cells[k + 1] <= b {
        figures.total += cells[k + 4]
        if cells[k + 2] > b {
          figures.live += cells[k + 4]
          figures.blocks += cells[k + 3]
        }
      }
      return figures
    }
  }

  @Test func theGridGivesAtEveryBucketEndWhatReportAtGivesThere() throws {
    let trace = try Self.knownTimes()
    let (_, page) = try Self.pageData(trace, options: Self.gridOptions)
    let grid = try #require(page["grid"] as? [String: Any])
    #expect(grid["bucket_ns"] as? Int == 200_000)
    #expect(grid["buckets"] as? Int == 5)
    let instants = try Self.instants(grid)
    // By hand: at 200 µs A and B; at 400 µs B; at 600 µs B and C; then C alone
    #expect(instants.map(\.live) == [96, 48, 144, 96, 96])
    #expect(instants.map(\.total) == [96, 96, 192, 192, 240])
    for (b, instant) in instants.enumerated() {
      let at = try Statistics(
        contentsOf: trace.path, options: .init(upTo: .nanoseconds(200_000 * (b + 1))))
      #expect(UInt64(instant.live) == at.totals.liveBytes, "bucket \(b)")
      #expect(UInt64(instant.blocks) == at.totals.liveBlocks, "bucket \(b)")
      #expect(UInt64(instant.total) == at.totals.allocatedBytes, "bucket \(b)")
    }
  }

  @Test func aGridOverItsCellBoundMergesBucketsAndStaysExact() throws {
    // Given the trace of known times, whose grid has 4 cells in 5 buckets of 200 µs
    let trace = try Self.knownTimes()
    var options = Self.gridOptions
    options.gridCells = 3
    // When the page may hold 3 cells
    let (_, page) = try Self.pageData(trace, options: options)
    let grid = try #require(page["grid"] as? [String: Any])
    // Then buckets merged twice, to 2 of 800 µs, where A and B fall in one cell
    #expect(grid["bucket_ns"] as? Int == 800_000)
    #expect(grid["buckets"] as? Int == 2)
    #expect((grid["cells"] as? [Int])?.count == 3 * 5)
    // And each bucket end still gives what report --at gives there
    let instants = try Self.instants(grid)
    #expect(instants.map(\.live) == [96, 96])
    for (b, end) in [800_000, 1_000_000].enumerated() {
      let at = try Statistics(contentsOf: trace.path, options: .init(upTo: .nanoseconds(end)))
      #expect(UInt64(instants[b].live) == at.totals.liveBytes)
      #expect(UInt64(instants[b].total) == at.totals.allocatedBytes)
    }
  }

  @Test func aRangeOfBucketsGivesWhatWasAllocatedInItAndIsLiveAtItsEnd() throws {
    let trace = try Self.knownTimes()
    let (_, page) = try Self.pageData(trace, options: Self.gridOptions)
    let grid = try #require(page["grid"] as? [String: Any])
    let cells = try #require(grid["cells"] as? [Int])
    func generation(_ a: Int, _ b: Int) -> Int {
      stride(from: 0, to: cells.count, by: 5).reduce(0) { sum, k in
        (a...b).contains(cells[k + 1]) && cells[k + 2] > b ? sum + cells[k + 4] : sum
      }
    }
    // (0, 400 µs]: A and B made, only B live at 400 µs; (200, 600 µs]: C; (400 µs, 1 ms]:
    // nothing made there but D, freed at once
    #expect(generation(0, 1) == 48)
    #expect(generation(1, 2) == 96)
    #expect(generation(3, 4) == 0)
    #expect(generation(0, 4) == 96)
  }

  @Test func stacksBeyondTheTopOnesForEachWeightAreSummedIntoOneOtherRow() throws {
    // Given stack 1: one block of 1,000 B, kept; stack 2: five of 100 B, each freed before
    // anything else happens (temporary); stack 3: two of 10 B, each freed only after another
    // allocation
    var writer = TraceWriter(header: TraceHeader(pid: 7))
    var chunk = writer.makeChunk(threadSerial: 1)
    for id in 1...3 { chunk.stack(StackID(UInt64(id)), parent: .empty, pc: 0x40_0000 + UInt64(id)) }
    var time: UInt64 = 0
    func next() -> UInt64 {
      time += 10
      return time
    }
    chunk.alloc(at: next(), size: 1_000, address: Address(0x1000), stack: StackID(1))
    for n in 0..<5 {
      let id = chunk.alloc(
        at: next(), size: 100, address: Address(0x2000 + UInt64(n) * 128),
        stack: StackID(2))
      chunk.free(at: next(), id)
    }
    let first = chunk.alloc(at: next(), size: 10, address: Address(0x3000), stack: StackID(3))
    let second = chunk.alloc(at: next(), size: 10, address: Address(0x3100), stack: StackID(3))
    chunk.free(at: next(), first)
    chunk.free(at: next(), second)
    writer.append(chunk)
    writer.appendTrailer(endTime: next())
    let trace = try TemporaryTrace(writer)
    // When its page keeps one stack per weight
    var options = HTMLPageOptions()
    options.stacksPerWeight = 1
    let (_, page) = try Self.pageData(trace, options: options)
    let stacks = try #require(page["stacks"] as? [[String: Any]])
    // Then stack 1 (most at the peak, most bytes) and stack 2 (most allocations, all
    // temporary) are kept, and stack 3 is the other row; weights are peak, allocated bytes,
    // allocations, temporary allocations, leaked bytes; the peak (1,100 B) came with stack
    // 2's first block
    #expect(stacks.map { $0["id"] as? Int } == [1, 2, nil])
    #expect(
      stacks.map { $0["weights"] as? [Int] } == [
        [1_000, 1_000, 1, 0, 0], [100, 500, 5, 5, 0], [0, 20, 2, 0, 0],
      ])
  }
}
