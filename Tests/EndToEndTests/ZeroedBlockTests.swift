import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// New blocks read zero under the shim (see "Find leaks" in the README); zeroing must not make
/// the program's memory resident where untraced it stays untouched.
@Suite struct ZeroedBlockTests {
  @Test func aLargeBlockNeverWrittenReadsZeroWithoutBecomingResident() throws {
    // Given blocks of 16 MiB and then 28 MiB from glibc's heap (its mmap threshold raised by a
    // freed mapped block) that the program never writes: zeroing them wrote every page, 30 MB
    // of RSS that the untraced program never had
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("bigblocks", in: dir)
    let trace = dir.appendingPathComponent("big.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n")
    let rss = try #require(lines.first { $0.hasPrefix("rss ") }).split(separator: " ")
      .dropFirst().compactMap { Int($0) }
    try #require(rss.count == 3)
    // Then they read zero, and each grows the RSS by less than a megabyte
    #expect(lines.contains("zero 1"))
    #expect(rss[1] - rss[0] < 1024 && rss[2] - rss[1] < 1024, "\(rss) kB")
  }

  @Test func sampledThreadsWhoseKeyDestructorsAllocateLeaveATraceThatReads() throws {
    // Given 8 waves of 1,200 threads alive at once (some sharing buffers) whose pthread key
    // destructors allocate after the shim's exit destructor, recorded sampled: such a thread
    // timed its COUNTS before it waited for a shared buffer, and a chunk that began with it
    // came before the one written ahead of it ("chunk ... out of order": 11 traces of 26)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("tlsdtors", in: dir)
    for run in 0..<2 {
      let trace = dir.appendingPathComponent("dtors\(run).trace").path
      let result = try Harness.heapline(
        ["record", "--no-leaks", "--sample-bytes", "32768", "-o", trace, "--", program]
          + ["1200", "8", "20"])
      #expect(result.status == 0, "\(result.stderr)")
      // Then every chunk reads, and the totals hold every thread's allocations
      let totals = try Statistics(reader: try TraceReader(path: trace)).totals
      #expect(totals.allocationCount >= 8 * 1200 * (1 + 300 + 20), "\(totals)")
    }
  }
}
