import Foundation
import Testing

/// `heapline timeline` and `report --at` on the phases fixture, whose pattern is known:
/// Steps 40,000 B at A and 120,000 at B; a Spike of 1,000,000 B freed before C; Growth of
/// 50 × 1,000 B before D; 40,000 B of Steps freed before E.
@Suite struct TimelineEndToEndTests {
  /// What the scopes hold at each mark: Steps, Spike, Growth.
  static let atMarks: [(String, [Int])] = [
    ("begin", [0, 0, 0]), ("A", [40_000, 0, 0]), ("B", [120_000, 0, 0]),
    ("C", [120_000, 0, 0]), ("D", [120_000, 0, 50_000]), ("E", [80_000, 0, 50_000]),
  ]

  func timeline(_ trace: String, _ arguments: [String]) throws -> CSVTable {
    let result = try Harness.heapline(["timeline", trace] + arguments)
    #expect(result.status == 0, "\(result.stderr)")
    return try CSVTable(result.stdout)
  }

  @Test(arguments: ["5", "10"])
  func rowsFollowThePatternMarkByMark(interval: String) throws {
    // Given the fixture recorded, and its timeline in steps of at most 10 ms (it sleeps 20 ms
    // after each mark, so the row of a mark holds the state at the mark)
    let trace = try PhasesFixture.phases.get().trace
    let table = try timeline(trace, ["--interval", interval])
    let scopes = try ["Steps", "Spike", "Growth"].map { try table.integers("live_bytes:" + $0) }
    let live = try table.integers("live_bytes")
    let marker = try table.column("marker")
    // Then the row of each mark shows exactly what the scopes hold there
    var markRows: [Int] = []
    for (name, expected) in Self.atMarks {
      let row = try #require(table.rows.firstIndex { $0[marker] == name }, "mark \(name)")
      #expect(scopes.map { $0[row] } == expected, "at mark \(name)")
      markRows.append(row)
    }
    #expect(markRows == markRows.sorted())
    // And between two marks every row lies on the way from one state to the next
    func values(_ scope: Int, _ range: ClosedRange<Int>) -> [Int] {
      range.map { scopes[scope][$0] }
    }
    let (b, c, d, e) = (markRows[2], markRows[3], markRows[4], markRows[5])
    let steps = values(0, markRows[0]...b)
    #expect(steps == steps.sorted() && steps.allSatisfy { $0 % 4_000 == 0 })
    #expect(values(0, b...d).allSatisfy { $0 == 120_000 })
    let spike = values(1, b...c)
    #expect(spike.allSatisfy { $0 % 10_000 == 0 && $0 <= 1_000_000 })
    #expect(values(1, c...(table.rows.count - 1)).allSatisfy { $0 == 0 })
    let growth = values(2, c...d)
    #expect(growth == growth.sorted() && growth.allSatisfy { $0 % 1_000 == 0 })
    let freeing = values(0, d...e)
    #expect(freeing == freeing.sorted(by: >) && freeing.allSatisfy { $0 % 4_000 == 0 })
    #expect(values(2, d...(table.rows.count - 1)).allSatisfy { $0 == 50_000 })
    // And the peak is the spike at its height, on top of the steps
    let peakRow = try #require(live.indices.max { live[$0] < live[$1] })
    #expect((scopes[0][peakRow], scopes[1][peakRow]) == (120_000, 1_000_000))
    #expect(b < peakRow && peakRow < c)
    // And every row's categories add up to its live bytes
    let categoryColumns = table.header.indices.filter { table.header[$0].hasPrefix("live_bytes:") }
    for (index, row) in table.rows.enumerated() {
      #expect(categoryColumns.map { Int(row[$0])! }.reduce(0, +) == live[index])
    }
  }

  @Test(arguments: ["1", "3", "10", "50", "1000"])
  func theLastRowAndTheLargestAreTheReportsAtAnyInterval(interval: String) throws {
    let trace = try PhasesFixture.phases.get().trace
    let totals = try PhasesFixture.reportTotals(trace)
    let table = try timeline(trace, ["--interval", interval, "--by", "total"])
    let live = try table.integers("live_bytes")
    #expect(live.last == totals["live_bytes"])
    #expect(try table.integers("live_blocks").last == totals["live_blocks"])
    #expect(live.max() == totals["peak_live_bytes"])
    #expect(try table.integers("peak_live_bytes").max() == totals["peak_live_bytes"])
    #expect(try table.integers("allocations").reduce(0, +) == totals["allocations"])
    #expect(try table.integers("frees").reduce(0, +) == totals["frees"])
    #expect(!table.header.contains { $0.hasPrefix("live_bytes:") })
  }

  @Test func aRowIsWhatReportAtItsTimeShows() throws {
    // Given the row of mark B, in steps of 10 ms
    let trace = try PhasesFixture.phases.get().trace
    let table = try timeline(trace, ["--interval", "10", "-o", "/dev/stdout"])
    let marker = try table.column("marker")
    let row = try #require(table.rows.first { $0[marker] == "B" })
    // When the report is asked for that instant, with --at and with its older name --up-to
    for option in ["--at", "--up-to"] {
      let totals = try PhasesFixture.reportTotals(trace, [option, row[0]])
      // Then it shows the row's figures
      #expect(totals["live_bytes"] == Int(row[try table.column("live_bytes")]))
      #expect(totals["live_blocks"] == Int(row[try table.column("live_blocks")]))
    }
  }

  @Test func theCSVGoesToTheFileNamedByO() throws {
    let recording = try PhasesFixture.phases.get()
    let file = recording.directory.appendingPathComponent("timeline.csv")
    let result = try Harness.heapline(["timeline", recording.trace, "-o", file.path])
    #expect(result.status == 0)
    #expect(result.stdout.isEmpty)
    let table = try CSVTable(String(contentsOf: file, encoding: .utf8))
    #expect(table.header.first == "time_s" && table.header.last == "marker")
  }
}
