import Foundation
import Testing

/// The in-process leak API (`Heapline.expectNoLeaks`, `Heapline.checkLeaks`,
/// `Recording.leaks`) in a process of its own (Tests/LeakAPIFixture), on objects whose sizes
/// the fixture gives: a controller of 200 bytes, its store of 240, the store's callback context
/// of 168, and an attachment of 144.
@Suite struct LeakAPITests {
  static var fixture: String {
    URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("heapline-api-fixture").path
  }

  @Test func expectNoLeaksAndCheckLeaksReportExactlyWhatLeaked() throws {
    let result = try Harness.run(Self.fixture, [])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    let cycle = "cycle LeakyController → LeakyStore → closure context → LeakyController"
    #expect(lines == [
      // A closure that captures self strongly, in an object that self owns: one cycle
      "strong: \(cycle) | instances 1 | definitely 608/3 | indirectly 0/0 | possibly 0/0",
      "message names the cycle: true",
      "message names the allocating function: true",
      // The same with [weak self]: nothing
      "weak: clean",
      // Ten of them, each holding an attachment: one group of ten
      "ten: \(cycle) | instances 10 | definitely 6080/30 | indirectly 1440/10 | possibly 0/0",
      // checkLeaks in a recording, and the recording's report of that scan
      "check: scan 1 lost 7520/40 possibly 0/0",
      "recording: scan 1 api \(cycle) | instances 10 | definitely 6080/30 | indirectly 1440/10 | possibly 0/0",
    ])
  }
}
