import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// A program whose thread allocates close to the end of a small stack (Fixtures/smallstack.c).
@Suite struct SmallStackTests {
  @Test func aThreadThatAllocatesFromANewCallSiteNearTheEndOfItsStackRunsAsUntraced() throws {
    // Given a thread of 16 KiB that allocates from a call site never seen before, with 1,024
    // bytes of its stack to spare (untraced it needs about 400): the shim read the call site's
    // unwinding rules on the thread's stack, 1,150 bytes more, and the program died of SIGSEGV
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("smallstack", in: dir, flags: ["-O1", "-Wl,-z,now"])
    let trace = dir.appendingPathComponent("small.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "1024"])
    // Then it runs to its end, and its block of 24 bytes is in the trace, from its function
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "ok\n")
    let stats = try Statistics(reader: TraceReader(path: trace))
    let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
    let descend = stats.topStacks.filter { report.frames(of: $0).first?.function == "descend" }
    #expect(descend.map(\.totalBytes) == [24])
  }
}
