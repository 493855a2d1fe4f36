import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Statistics from traces with exactly known content")
struct StatisticsTests {
  /// 100 blocks of 48 bytes allocated 1 µs apart, then the first 60 freed.
  static func hundredAllocationsSixtyFreed() throws -> TemporaryTrace {
    var writer = TraceWriter(header: TraceHeader(pid: 4242))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.stack(StackID(1), parent: .empty, pc: 0x40_1000)
    let ids = (0..<100).map { index in
      chunk.alloc(
        at: UInt64(index) * 1_000, size: 48, address: Address(0x10_0000 + UInt64(index) * 64),
        stack: StackID(1))
    }
    for (index, id) in ids.prefix(60).enumerated() {
      chunk.free(at: 200_000 + UInt64(index), id)
    }
    writer.append(chunk)
    writer.appendTrailer(endTime: 300_000)
    return try TemporaryTrace(writer)
  }

  @Test("N allocations of S bytes with K freed give exact totals")
  func totals() throws {
    // Given 100 allocations of 48 bytes, 60 of them freed
    let trace = try Self.hundredAllocationsSixtyFreed()
    // When the statistics are computed
    let stats = try Statistics(contentsOf: trace.path)
    // Then every total is exact
    let totals = stats.totals
    #expect(totals.allocationCount == 100)
    #expect(totals.freeCount == 60)
    #expect(totals.unmatchedFreeCount == 0)
    #expect(totals.allocatedBytes == 4_800)
    #expect(totals.freedBytes == 2_880)
    #expect(totals.peakLiveBytes == 4_800)
    #expect(totals.peakLiveBlocks == 100)
    #expect(totals.peakTime == 99_000)
    #expect(totals.liveBytes == 1_920)
    #expect(totals.liveBlocks == 40)
    #expect(stats.trace.pid == 4242)
    #expect(stats.trace.durationNanoseconds == 300_000)
    #expect(stats.trace.isComplete)
  }

  @Test("the size-class category gets Object Alloc's columns")
  func categoryColumns() throws {
    let trace = try Self.hundredAllocationsSixtyFreed()
    let stats = try Statistics(contentsOf: trace.path)
    let category = try #require(stats.category(named: "Malloc 48 Bytes"))
    #expect(category.persistentBytes == 1_920)
    #expect(category.persistentCount == 40)
    #expect(category.transientCount == 60)
    #expect(category.totalBytes == 4_800)
    #expect(category.totalCount == 100)
    #expect(category.bytesAtPeak == 4_800)
    #expect(category.kind == .sizeClass)
    #expect(stats.categories.count == 1)
  }

  @Test("statistics up to a time are those of the trace cut there")
  func upTo() throws {
    // Given the same trace, stopped at 49.5 µs: 50 allocations made, none freed
    let trace = try Self.hundredAllocationsSixtyFreed()
    let stats = try Statistics(
      contentsOf: trace.path, options: StatisticsOptions(upTo: .nanoseconds(49_500)))
    #expect(stats.totals.allocationCount == 50)
    #expect(stats.totals.liveBytes == 2_400)
    #expect(stats.trace.durationNanoseconds == 49_500)
    // And the stack defined in the trace still resolves
    #expect(stats.topStacks.first?.frames == [0x40_1000])
  }

  @Test("top stacks are ranked by their live bytes at the global peak")
  func peakContribution() throws {
    // Given three stacks whose live bytes peak at different times:
    //   t=0  s1 +1000 | t=10 s2 +300 | t=20 free s1 | t=30 s2 +500 | t=40 s3 +900 (peak 1700)
    //   t=50 free s3  | t=60 s1 +100
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let a1 = chunk.alloc(at: 0, size: 1000, address: 0x1000, stack: StackID(1))
    chunk.alloc(at: 10, size: 300, address: 0x2000, stack: StackID(2))
    chunk.free(at: 20, a1)
    chunk.alloc(at: 30, size: 500, address: 0x3000, stack: StackID(2))
    let c1 = chunk.alloc(at: 40, size: 900, address: 0x4000, stack: StackID(3))
    chunk.free(at: 50, c1)
    chunk.alloc(at: 60, size: 100, address: 0x5000, stack: StackID(1))
    for id in 1...3 { chunk.stack(StackID(UInt64(id)), parent: .empty, pc: UInt64(id) * 0x100) }
    writer.append(chunk)
    writer.appendTrailer(endTime: 100)
    let trace = try TemporaryTrace(writer)
    // When the statistics are computed
    let stats = try Statistics(contentsOf: trace.path)
    // Then the peak is 1700 bytes at t=40, and the stacks rank s3, s2, s1
    #expect(stats.totals.peakLiveBytes == 1_700)
    #expect(stats.totals.peakTime == 40)
    #expect(stats.topStacks.map(\.id) == [StackID(3), StackID(2), StackID(1)])
    #expect(stats.topStacks.map(\.bytesAtPeak) == [900, 800, 0])
    #expect(stats.topStacks.map(\.liveBytes) == [0, 800, 100])
    #expect(stats.topStacks.map(\.liveBlocks) == [0, 2, 1])
    #expect(stats.topStacks.map(\.allocationCount) == [1, 2, 2])
    #expect(stats.topStacks.map(\.totalBytes) == [900, 800, 1_100])
    #expect(stats.stack(StackID(2))?.frames == [0x200])
  }

  @Test("the top-stack count limits the ranking")
  func topStackCount() throws {
    let trace = try Self.hundredAllocationsSixtyFreed()
    let stats = try Statistics(contentsOf: trace.path, options: .init(topStackCount: 0))
    #expect(stats.topStacks.isEmpty)
    #expect(stats.stackCount == 1)
  }

  @Test("realloc, written as a free and an allocation, moves the block without doubling it")
  func realloc() throws {
    // Given a 100-byte block reallocated to 200 bytes at t=10
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let old = chunk.alloc(at: 0, size: 100, address: 0x1000)
    chunk.free(at: 10, old)
    chunk.alloc(at: 10, size: 200, address: 0x2000)
    writer.append(chunk)
    writer.appendTrailer(endTime: 20)
    let trace = try TemporaryTrace(writer)
    // When the statistics are computed
    let stats = try Statistics(contentsOf: trace.path)
    // Then the peak is the new size, never old + new
    #expect(stats.totals.allocationCount == 2)
    #expect(stats.totals.freeCount == 1)
    #expect(stats.totals.peakLiveBytes == 200)
    #expect(stats.totals.peakTime == 10)
    #expect(stats.totals.liveBytes == 200)
    #expect(stats.category(named: "Malloc 112 Bytes")?.transientCount == 1)
    #expect(stats.category(named: "Malloc 208 Bytes")?.persistentCount == 1)
  }

  @Test("a free of a block allocated before recording is counted and ignored")
  func unmatchedFree() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 32, address: 0x1000)
    chunk.free(at: 5, AllocID(threadSerial: 9, counter: 77))
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.unmatchedFreeCount == 1)
    #expect(stats.totals.freeCount == 0)
    #expect(stats.totals.liveBytes == 32)
  }

  @Test("named categories take their CATEGORY record's name, even when it comes last")
  func namedCategory() throws {
    var writer = TraceWriter()
    let imageID = CategoryID(0x401)
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 64, address: 0x1000, category: imageID)
    chunk.alloc(at: 1, size: 64, address: 0x2000, category: imageID)
    chunk.alloc(at: 2, size: 16, address: 0x3000)
    chunk.category(imageID, kind: .swiftClass, name: "Demo.Image")
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let stats = try Statistics(contentsOf: trace.path)
    let image = try #require(stats.category(named: "Demo.Image"))
    #expect(image.kind == .swiftClass)
    #expect(image.persistentBytes == 128)
    #expect(stats.categories.map(\.name) == ["Demo.Image", "Malloc 16 Bytes"])
  }

  @Test("RSS samples are summarized")
  func rss() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 0)
    chunk.rss(at: 0, residentBytes: 10_000)
    chunk.rss(at: 100, residentBytes: 30_000)
    chunk.rss(at: 200, residentBytes: 20_000)
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let totals = try Statistics(contentsOf: trace.path).totals
    #expect(totals.rssSampleCount == 3)
    #expect(totals.peakRSSBytes == 30_000)
    #expect(totals.lastRSSBytes == 20_000)
  }
}
