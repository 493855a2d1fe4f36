// This file imports Heapline alone, as a client package would: every type named below must come
// through it, or the file does not compile.
import Heapline
import Testing

extension RecordBodyTests {
  @Test func importHeaplineAloneNamesWhatARecordingGivesBack() throws {
    // Given 20 Gadgets made and kept between marks A and B, and a leak scan
    let (gadgets, recording) = try Heapline.record {
      Heapline.mark("A")
      let made = (0..<20).map { _ in Gadget() }
      Heapline.mark("B")
      try Heapline.checkLeaks()
      return made
    }
    // Then the statistics, the growth and the leak report are all reachable by their names
    let statistics: Statistics = recording.statistics
    let category: CategoryStatistics = try #require(
      statistics.category(named: "HeaplineTests.Gadget"))
    #expect((category.persistentCount, category.persistentBytes) == (20, 960))
    let totals: AllocationTotals = statistics.totals
    _ = totals  // named here; its figures include what other suites allocate meanwhile
    let growth: Growth = try recording.growth(from: MarkReference("A"), to: "B")
    let grown: CategoryGrowth = try #require(growth.category(named: "HeaplineTests.Gadget"))
    #expect((grown.count, grown.bytes) == (20, 960))
    let report: LeakReport = try recording.leaks(suppressions: LeakSuppressions())
    let scan: LeakScan = report.scan
    #expect(scan.id == 1)
    let groups: [LeakGroup] = report.groups
    let amount: LeakAmount = report.definitelyLost
    _ = (groups, amount)
    #expect(gadgets.count == 20)
  }
}
