import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline report` given several traces of one program: stacks matched by symbol across
/// processes, counts and bytes summed, each run's peak told with its trace.
@Suite struct RunsReportTests {
  /// The blocks fixture recorded with `arguments` (N S K STATUS) into `directory`.
  static func record(_ arguments: [String], name: String, in directory: URL) throws -> String {
    let program = try Harness.fixture("blocks", in: directory)
    let trace = directory.appendingPathComponent("\(name).trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program] + arguments)
    guard result.status == 0 else {
      throw HarnessError("recording \(arguments) failed (\(result.status)): \(result.stderr)")
    }
    return trace
  }

  @Test func twoRunsWithDifferentArgumentsSumByStack() throws {
    // Given 1,000 blocks of 48 B with 400 freed, then 500 with 100 freed, in two processes
    let directory = try Harness.temporaryDirectory()
    let first = try Self.record(["1000", "48", "400", "0"], name: "first", in: directory)
    let second = try Self.record(["500", "48", "100", "0"], name: "second", in: directory)
    // When both are reported together
    let result = try Harness.heapline(["report", first, second, "--top", "1000"])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.components(separatedBy: "\n")
    // Then the malloc in make_blocks is one stack with both runs' blocks
    let source = try String(
      contentsOf: Harness.fixtures.appendingPathComponent("blocks.c"), encoding: .utf8)
    let mallocLine =
      try #require(
        source.components(separatedBy: "\n").firstIndex { $0.contains("BLOCKS_MALLOC_LINE") }) + 1
    let heads = lines.indices.filter { index in
      index + 1 < lines.count && lines[index].hasPrefix("#")
        && lines[index + 1].hasPrefix("    make_blocks ")
        && lines[index + 1].hasSuffix("blocks.c:\(mallocLine)")
    }
    #expect(heads.count == 1, "\(result.stdout)")
    let head = try #require(heads.first)
    #expect(
      lines[head].split(separator: " ", maxSplits: 1).last
        == "48,000 B live in 1,000 blocks; 72,000 B allocated in 1,500 allocations")
    // And the totals are the sums of each run's, and each run's peak is its own
    let totals = try [first, second].map { try PhasesFixture.reportTotals($0) }
    func sum(_ key: String) -> String {
      ByteCountText.grouped(UInt64(totals.map { $0[key]! }.reduce(0, +)))
    }
    #expect(lines.contains("  Allocations      \(sum("allocations"))"))
    #expect(lines.contains("  Bytes allocated  \(sum("allocated_bytes")) B"))
    #expect(lines.contains("  Blocks live      \(sum("live_blocks"))"))
    #expect(lines.contains("  Bytes live       \(sum("live_bytes")) B"))
    for (number, trace) in [first, second].enumerated() {
      let peak = ByteCountText.grouped(UInt64(totals[number]["peak_live_bytes"]!))
      #expect(
        lines.contains {
          $0.hasPrefix("  Run \(number + 1): '\(trace)', ")
            && $0.contains(", peak \(peak) B live at ")
        },
        "\(result.stdout)")
    }
  }

  @Test func topZeroListsNoStackButSaysHowManyThereAre() throws {
    // Given the blocks fixture: its stacks are there, and --top 0 asks for none of them
    let directory = try Harness.temporaryDirectory()
    let trace = try Self.record(["10", "48", "0", "0"], name: "zero", in: directory)
    let count = try Statistics(reader: TraceReader(path: trace)).stackCount
    let result = try Harness.heapline(["report", trace, "--top", "0"])
    #expect(
      result.stdout.hasSuffix("\nTop 0 of \(count) allocation stacks, by live bytes at the peak\n"),
      "\(result.stdout)")
    // And a merged file of one run is "1 run"
    let merged = directory.appendingPathComponent("one.merged").path
    #expect(try Harness.heapline(["merge", trace, "-o", merged]).status == 0)
    let one = try Harness.heapline(["report", merged])
    #expect(one.stdout.hasPrefix("Heapline report for 1 run, stacks matched"), "\(one.stdout)")
  }

  @Test func severalTracesAreReportedAsTextOnly() throws {
    let trace = try PhasesFixture.phases.get().trace
    let result = try Harness.heapline(["report", trace, trace, "--format", "json"])
    #expect(result.status == 64)
    #expect(
      result.stderr.split(separator: "\n").first.map(String.init)
        == "heapline: several traces, or a merged profile, are reported as text, stacks ranked"
        + " by bytes live; --format json, --by and --sort take one trace")
  }
}
