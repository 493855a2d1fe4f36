import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Leak groups in an optimized build: identical leaks whose stacks differ only in return
/// addresses (Fixtures/releasecycles.swift, built with -O) are one group, as a reader sees them.
@Suite struct LeakGroupingReleaseTests {
  static let cycle = "ViewController → Store → ViewController"

  @Test func identicalCyclesFromAnUnrolledLoopAreOneGroupOfThree() throws {
    // Given a release build whose loop leaks three identical cycles
    let directory = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("releasecycles", ["-O"], in: directory)
    let trace = directory.appendingPathComponent("release.trace").path
    let recorded = try Harness.heapline(["record", "-o", trace, "--", program])
    try #require(recorded.status == 0, "\(recorded.stderr)")
    // Whose six blocks were allocated from six stacks, one per copy of the loop's body
    let report = try LeakReport.read(path: trace, symbolizer: Symbolizer())
    #expect(report.scan.blocks.count == 6)
    #expect(Set(report.scan.blocks.map(\.stack)).count == 6)
    // Then the report has one group of three cycles, with every block and byte:
    // 40 (controller) + 40 (store), three times
    #expect(report.groups.map(\.name) == [Self.cycle])
    #expect(report.groups.map(\.instances) == [3])
    #expect(report.definitelyLost == LeakAmount(blocks: 6, bytes: 240))
    // And so do the text and the JSON
    let text = try Harness.heapline(["leaks", trace])
    #expect(text.status == 1)
    #expect(text.stdout.contains("Leaked cycle: \(Self.cycle)"))
    #expect(text.stdout.contains("3 leaks"))
    let json = try Harness.heapline(["leaks", trace, "--format", "json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let groups = try #require(object["groups"] as? [[String: Any]])
    #expect(groups.count == 1)
    #expect(groups.first?["instances"] as? Int == 3)
    let lost = try #require(groups.first?["definitely_lost"] as? [String: Any])
    #expect(lost["blocks"] as? Int == 6)
    #expect(lost["bytes"] as? Int == 240)
  }
}
