import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Statistics that count each stack's categories apart, as pprof samples are")
struct StackCategorySplitTests {
  /// Stack 1: three 64-byte Demo.Image blocks (the first freed) and two of 16 bytes; stack 2:
  /// one 100-byte Demo.Image block.
  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter()
    let image = CategoryID(0x401)
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.stack(StackID(1), parent: .empty, pc: 0x40_1000)
    chunk.stack(StackID(2), parent: .empty, pc: 0x40_2000)
    let first = chunk.alloc(at: 0, size: 64, address: 0x1000, stack: StackID(1), category: image)
    chunk.alloc(at: 1, size: 64, address: 0x2000, stack: StackID(1), category: image)
    chunk.alloc(at: 2, size: 64, address: 0x3000, stack: StackID(1), category: image)
    chunk.alloc(at: 3, size: 16, address: 0x4000, stack: StackID(1))
    chunk.alloc(at: 4, size: 16, address: 0x5000, stack: StackID(1))
    chunk.alloc(at: 5, size: 100, address: 0x6000, stack: StackID(2), category: image)
    chunk.free(at: 6, first)
    chunk.category(image, kind: .swiftClass, name: "Demo.Image")
    writer.append(chunk)
    writer.appendTrailer(endTime: 10)
    return try TemporaryTrace(writer)
  }

  @Test("each (stack, category) pair has its own exact figures")
  func pairs() throws {
    // Given the trace, when its statistics split categories
    var options = StatisticsOptions(topStackCount: .max)
    options.splitsStacksByCategory = true
    let trace = try Self.trace()
    let stats = try Statistics(contentsOf: trace.path, options: options)
    // Then each pair is one entry with its category
    let names = Dictionary(uniqueKeysWithValues: stats.categories.map { ($0.id, $0.name) })
    let rows = stats.topStacks.map { stack in
      "\(stack.id.rawValue) \(names[stack.category!]!): \(stack.allocationCount) allocs "
        + "\(stack.totalBytes) B, \(stack.liveBlocks) live \(stack.liveBytes) B"
    }.sorted()
    #expect(
      rows == [
        "1 Demo.Image: 3 allocs 192 B, 2 live 128 B",
        "1 Malloc 16 Bytes: 2 allocs 32 B, 2 live 32 B",
        "2 Demo.Image: 1 allocs 100 B, 1 live 100 B",
      ])
    #expect(stats.topStacks.allSatisfy { $0.frames.count == 1 })
  }

  @Test("without the split a stack is one entry, with no category")
  func whole() throws {
    let trace = try Self.trace()
    let stats = try Statistics(
      contentsOf: trace.path, options: StatisticsOptions(topStackCount: .max))
    let one = try #require(stats.stack(StackID(1)))
    #expect(one.allocationCount == 5)
    #expect(one.liveBytes == 160)
    #expect(one.category == nil)
    #expect(stats.topStacks.count == 2)
  }
}
