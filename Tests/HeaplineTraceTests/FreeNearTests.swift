import HeaplineTrace
import Testing

/// FREE_NEAR names a block of the chunk's own thread by its alloc counter's delta from the
/// chunk's previous FREE_NEAR, so each chunk decodes alone, in any order of frees.
@Suite("FREE_NEAR records")
struct FreeNearTests {
  @Test("frees in any order, across a chunk boundary, decode to the allocations they name")
  func anyOrder() throws {
    var writer = TraceWriter()
    var first = writer.makeChunk(threadSerial: 1)
    for index in 0..<5 {
      first.alloc(at: UInt64(index), size: 16, address: Address(0x100 + 16 * UInt64(index)))
    }
    // Forward, back, forward again: deltas +3, -3, +4 from the chunk's first counter
    for (time, counter) in [(10, 3), (11, 0), (12, 4)] {
      first.free(at: UInt64(time), AllocID(threadSerial: 1, counter: UInt64(counter)))
    }
    writer.append(first)
    // The next chunk starts its deltas from its own first counter, 5
    var second = writer.makeChunk(threadSerial: 1)
    #expect(second.firstAllocCounter == 5)
    second.alloc(at: 20, size: 32, address: 0x400)
    second.free(at: 21, AllocID(threadSerial: 1, counter: 1))
    second.free(at: 22, AllocID(threadSerial: 1, counter: 5))
    writer.append(second)
    writer.appendTrailer(endTime: 30)
    let trace = try TemporaryTrace(writer)
    let freed = try trace.events().events.compactMap { event -> UInt64? in
      guard case .free(let free) = event else { return nil }
      #expect(free.id.threadSerial == 1 && free.threadSerial == 1)
      return free.id.counter
    }
    #expect(freed == [3, 0, 4, 1, 5])
  }

  @Test("a FREE_NEAR that names an allocation not yet made is an error")
  func aheadOfTheAllocations() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10)
    // tag, dt 0, delta +1 (zigzag 2): counter 1, but only counter 0 exists
    chunk.appendRaw([0x0A, 0x00, 0x02])
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(error?.description.contains("a free names allocation 1, not yet made at 1") == true)
  }
}
