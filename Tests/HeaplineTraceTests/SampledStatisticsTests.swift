import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Statistics of a trace recorded in sampling mode: totals from COUNTS records, and sampled
/// allocations weighed `size / (1 - exp(-size/N))`.
@Suite struct SampledStatisticsTests {
  /// N = 64 KiB. Thread 1 counts 1,000 allocations of 100,000 bytes (120,000 usable), three of
  /// them sampled at 100 bytes on stack 1 and one at 64 KiB on stack 2; then 500 frees of
  /// 60,000 usable bytes, one of them the sampled 64 KiB block.
  func trace() throws -> String {
    var writer = TraceWriter(header: TraceHeader(pid: 7))
    var shim = writer.makeChunk(threadSerial: 0)
    shim.sampling(meanBytes: 65536)
    writer.append(shim)
    var thread = writer.makeChunk(threadSerial: 1)
    thread.counts(
      at: 100,
      AllocationCounts(
        allocations: 1000, frees: 0, requestedBytes: 100_000, usableBytesAllocated: 120_000,
        usableBytesFreed: 0))
    for index in 0..<3 as Range<UInt64> {
      _ = thread.alloc(
        at: 100 + index, size: 100, address: Address(0x1000 + index * 0x100), stack: StackID(1))
    }
    let big = thread.alloc(at: 110, size: 65536, address: Address(0x9000), stack: StackID(2))
    thread.counts(
      at: 200,
      AllocationCounts(
        allocations: 0, frees: 500, requestedBytes: 0, usableBytesAllocated: 0,
        usableBytesFreed: 60_000))
    thread.free(at: 200, big)
    writer.append(thread)
    writer.appendTrailer(endTime: 300)
    let path = FileManager.default.temporaryDirectory.appendingPathComponent(
      "sampled-\(UUID().uuidString).trace"
    ).path
    try writer.write(to: path)
    return path
  }

  @Test func totalsComeFromTheCountsAlone() throws {
    let stats = try Statistics(contentsOf: try trace())
    #expect(stats.sampleWeight == SampleWeight(meanBytes: 65536))
    #expect(stats.totals.allocationCount == 1000)
    #expect(stats.totals.freeCount == 500)
    #expect(stats.totals.allocatedBytes == 100_000)
    #expect(stats.totals.peakLiveBytes == 120_000)
    #expect(stats.totals.peakLiveBlocks == 1000)
    #expect(stats.totals.peakTime == 100)
    #expect(stats.totals.liveBytes == 60_000)
    #expect(stats.totals.liveBlocks == 500)
    #expect(stats.totals.unmatchedFreeCount == 0)
  }

  @Test func eachSampledAllocationIsWeighedByItsChanceOfBeingSampled() throws {
    let stats = try Statistics(
      contentsOf: try trace(), options: StatisticsOptions(topStackCount: 10))
    // 100 bytes are sampled with chance 1 - e^(-100/65536): each stands for 65,586 bytes and
    // 655.86 allocations; three stand for 196,758 bytes and 1,968 allocations (rounded once).
    let small = try #require(stats.topStacks.first { $0.id == StackID(1) })
    #expect(small.totalBytes == 196_758)
    #expect(small.allocationCount == 1968)
    #expect(small.liveBytes == 196_758)
    #expect(small.liveBlocks == 1968)
    // 64 KiB is sampled with chance 1 - 1/e: it stands for 103,676 bytes and 1.58 allocations
    let big = try #require(stats.topStacks.first { $0.id == StackID(2) })
    #expect(big.totalBytes == 103_676)
    #expect(big.allocationCount == 2)
    #expect(big.liveBytes == 0)
    #expect(big.liveBlocks == 0)
  }
}
