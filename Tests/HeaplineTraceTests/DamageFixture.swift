import Foundation
import HeaplineAnalysis
import HeaplineTrace

/// A trace with known content for the damage tests, and every reading path run over a file in
/// process: what `report`, `timeline`, `objects`, `leaks`, `diff` and `export` compute.
///
/// The trace: thread 1 allocates 20 blocks of 48 bytes in each of three chunks (the second
/// stored as zstd) and frees the first 10 of each; thread 2 allocates 5 blocks of 4,096 bytes
/// in each of two chunks, in category `App.Image`, and frees one of thread 1's blocks; the
/// shim's thread (serial 0) writes modules, stacks, RSS samples, marks `A` and `B`, 5 lost
/// events and a leak scan of two of thread 2's blocks. So 70 allocations, 31 frees and
/// 29 × 48 + 10 × 4,096 = 42,352 bytes live at the end.
enum DamageFixture {
  static let allocations: UInt64 = 70
  static let frees: UInt64 = 31
  static let liveBytes: UInt64 = 29 * 48 + 10 * 4_096
  static let lostEvents: UInt64 = 5
  static let image = CategoryID(0x400)

  static func writer() -> TraceWriter {
    var writer = TraceWriter(header: TraceHeader(pid: 42))
    var shim = writer.makeChunk(threadSerial: 0)
    shim.module(
      TraceModule(path: "/no/such/app", loadBias: 0, segments: [.init(start: 0x1000, size: 0x9000)])
    )
    shim.stack(StackID(1), parent: .empty, pc: 0x1100)
    shim.stack(StackID(2), parent: StackID(1), pc: 0x2200)
    shim.category(image, kind: .swiftClass, name: "App.Image")
    shim.rss(at: 1_001, residentBytes: 1 << 20)
    shim.mark(at: 5_003, name: "A")
    shim.lost(at: 6_007, reason: .signalHandler, count: 3)
    writer.append(shim)
    var threadTwo: [AllocID] = []
    for index in 0..<3 as Range<UInt64> {
      var chunk = writer.makeChunk(threadSerial: 1)
      let start = 10_000 + index * 20_000
      let ids = (0..<20 as Range<UInt64>).map { block in
        chunk.alloc(
          at: start + block * 500 + 1, size: 48,
          address: Address(0x10_0000 + (index * 20 + block) * 64),
          stack: StackID(1))
      }
      for (block, id) in ids.prefix(10).enumerated() {
        chunk.free(at: start + 10_000 + UInt64(block) * 300 + 2, id)
      }
      writer.append(chunk, encoding: index == 1 ? .zstd : .raw)
      if index < 2 {
        var images = writer.makeChunk(threadSerial: 2)
        for block in 0..<5 as Range<UInt64> {
          threadTwo.append(
            images.alloc(
              at: start + 4_000 + block * 700 + 3, size: 4_096,
              address: Address(0x90_0000 + UInt64(threadTwo.count) * 0x1000), stack: StackID(2),
              category: image))
        }
        if index == 1 { images.free(at: start + 9_004, AllocID(threadSerial: 1, counter: 15)) }
        writer.append(images)
      }
    }
    var late = writer.makeChunk(threadSerial: 0)
    late.rss(at: 60_001, residentBytes: 2 << 20)
    late.mark(at: 70_003, name: "B")
    late.lost(at: 71_005, reason: .insideShim, count: 2)
    var scan = LeakScan(
      id: 1, time: 80_000, trigger: .exit, threadsStopped: 1, liveBlocks: 39, liveBytes: liveBytes,
      rootBytes: 4_096, stopNanoseconds: 100, totalNanoseconds: 200)
    scan.blocks = threadTwo.prefix(2).enumerated().map { index, id in
      LeakedBlock(
        id: id, address: Address(0x90_0000 + UInt64(index) * 0x1000), size: 4_096,
        stack: StackID(2), category: image, reachability: .unreachable)
    }
    scan.edges = [LeakEdge(from: 0, to: 1)]
    late.leakScan(scan)
    writer.append(late)
    writer.appendTrailer(endTime: 100_000, lostEvents: lostEvents)
    return writer
  }

  /// What reading a file gave: a one-line error, or the trace's notices and everything the
  /// commands compute from it.
  enum Outcome: Equatable {
    case failed(String)
    case read(cut: CutShort?, isComplete: Bool, notices: [String], output: String)
  }

  /// Runs every reading path over the file at `path`, without symbolizing.
  static func readAll(_ path: String) -> Outcome {
    do throws(TraceError) {
      let reader = try TraceReader(path: path)
      let notices = try reader.notices()
      let output = try outputs(of: reader)
      return .read(
        cut: reader.cutShort, isComplete: reader.isComplete, notices: notices, output: output)
    } catch {
      return .failed(error.description)
    }
  }

  /// The outputs of the commands, in one string. An analysis error that is not about the
  /// file (a mark or a leak scan that a cut trace lacks) is part of the output.
  private static func outputs(of reader: TraceReader) throws(TraceError) -> String {
    var parts: [String] = []
    func run(_ body: () throws -> String) throws(TraceError) {
      do {
        parts.append(try body())
      } catch let error as TraceError {
        throw error
      } catch AnalysisError.trace(let error) {
        throw error
      } catch {
        parts.append("error: \(error)")
      }
    }
    try run {
      let statistics = try Statistics(reader: reader, options: StatisticsOptions(topStackCount: 5))
      let json = try JSONReportRenderer().render(
        StatisticsReport(statistics: statistics, symbolizer: nil))
      // The trace member says how the file ends; the notices are compared for that.
      let object = try JSONSerialization.jsonObject(with: Data(json.utf8)) as! [String: Any]
      let figures = object.filter { $0.key != "trace" }
      return String(
        decoding: try JSONSerialization.data(withJSONObject: figures, options: .sortedKeys),
        as: UTF8.self)
    }
    try run {
      var csv = StringOutput()
      try TimelineCSVWriter.write(
        reader, options: TimelineOptions(intervalNanoseconds: 5_000), to: &csv)
      return csv.text
    }
    try run {
      var csv = StringOutput()
      try ObjectListWriter.write(reader, options: ObjectListOptions(), symbolizer: nil, to: &csv)
      return csv.text
    }
    try run {
      LeakJSONRenderer().render(try LeakReport.read(path: reader.path, symbolizer: nil))
    }
    try run {
      let growth = try Growth(reader: reader, from: "A", to: "B")
      return GrowthReport(growth: growth, symbolizer: nil, stackLimit: nil).csv()
    }
    try run {
      let statistics = try Statistics(reader: reader, options: StackProfile.statisticsOptions)
      let profile = StackProfile(
        statistics: statistics, weights: Set(StackWeight.allCases), symbolizer: nil)
      return FoldedStacks.render(profile, weight: .live)
        + SpeedscopeExport.render(profile, weights: StackWeight.allCases, name: "t")
    }
    return parts.joined(separator: "\n---\n")
  }
}
