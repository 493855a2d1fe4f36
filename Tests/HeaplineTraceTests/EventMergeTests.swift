import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("The event stream merges chunks of all threads into one time order")
struct EventMergeTests {
  @Test("a free in thread B of a block from thread A matches, though B's chunk comes first")
  func crossThreadFreeWrittenEarly() throws {
    // Given thread A allocating x at 100 and y at 300, and thread B freeing x at 200 and
    // allocating z at 250, with B's chunk written to the file before A's
    var writer = TraceWriter()
    var chunkA = writer.makeChunk(threadSerial: 1)
    let x = chunkA.alloc(at: 100, size: 64, address: 0x1000)
    chunkA.alloc(at: 300, size: 32, address: 0x2000)
    var chunkB = writer.makeChunk(threadSerial: 2)
    chunkB.free(at: 200, x)
    chunkB.alloc(at: 250, size: 16, address: 0x9000)
    writer.append(chunkB)
    writer.append(chunkA)
    writer.appendTrailer(endTime: 400)
    let trace = try TemporaryTrace(writer)

    // When the events are streamed
    let events = try trace.events().events

    // Then they come in time order, the free names A's allocation, and B frees it
    #expect(events.map(\.time) == [100, 200, 250, 300])
    guard case .free(let free) = events[1] else {
      Issue.record("expected a free second, got \(events[1])")
      return
    }
    #expect(free.id == AllocID(threadSerial: 1, counter: 0))
    #expect(free.threadSerial == 2)
    // And the statistics match the free to its allocation
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.freeCount == 1)
    #expect(stats.totals.unmatchedFreeCount == 0)
    #expect(stats.totals.peakLiveBytes == 64)
    #expect(stats.totals.peakTime == 100)
    #expect(stats.totals.liveBytes == 48)
  }

  @Test("interleaved chunks of two threads, in scrambled file order, merge in time order")
  func interleavedChunks() throws {
    // Given two chunks per thread whose time ranges overlap, written newest first
    var writer = TraceWriter()
    var a1 = writer.makeChunk(threadSerial: 1)
    for time: UInt64 in [100, 180, 260] { a1.alloc(at: time, size: 16, address: Address(time)) }
    let a2First = a1.nextAllocID.counter
    var a2 = ChunkBuilder(threadSerial: 1, firstAllocCounter: a2First)
    for time: UInt64 in [400, 480] { a2.alloc(at: time, size: 16, address: Address(time)) }
    var b1 = writer.makeChunk(threadSerial: 2)
    for time: UInt64 in [150, 200, 390] { b1.alloc(at: time, size: 16, address: Address(time)) }
    var b2 = ChunkBuilder(threadSerial: 2, firstAllocCounter: 3)
    b2.free(at: 395, AllocID(threadSerial: 1, counter: 4))  // frees a2's 480 block: not yet
    b2.free(at: 500, AllocID(threadSerial: 1, counter: 4))
    for chunk in [b2, a2, b1, a1] { writer.append(chunk) }
    let trace = try TemporaryTrace(writer)

    // When the events are streamed
    let events = try trace.events().events

    // Then all of them arrive, in non-decreasing time, with per-chunk alloc counters
    #expect(events.map(\.time) == [100, 150, 180, 200, 260, 390, 395, 400, 480, 500])
    let allocIDs = events.compactMap { event -> AllocID? in
      if case .alloc(let alloc) = event { return alloc.id } else { return nil }
    }
    #expect(allocIDs.filter { $0.threadSerial == 1 }.map(\.counter) == [0, 1, 2, 3, 4])
    // And a free that precedes its allocation in time stays unmatched
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.unmatchedFreeCount == 1)
    #expect(stats.totals.freeCount == 1)
  }

  @Test("an allocation and its free at the same instant on two threads still match")
  func tieAllocatesFirst() throws {
    var writer = TraceWriter()
    var chunkB = writer.makeChunk(threadSerial: 2)
    chunkB.free(at: 50, AllocID(threadSerial: 1, counter: 0))
    var chunkA = writer.makeChunk(threadSerial: 1)
    chunkA.alloc(at: 50, size: 8, address: 0x10)
    writer.append(chunkB)
    writer.append(chunkA)
    let trace = try TemporaryTrace(writer)
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.freeCount == 1)
    #expect(stats.totals.liveBytes == 0)
  }

  @Test("a free of a block whose ALLOC stands behind its thread's other events of that time waits")
  func crossThreadFreeWaitsForItsAllocation() throws {
    // Given thread A freeing y and then allocating x in one grain, and thread B freeing x in
    // that grain, B's chunk opened first (so first among equals), and a free by B of a block
    // never allocated
    var writer = TraceWriter()
    var chunkA = writer.makeChunk(threadSerial: 1)
    let y = chunkA.alloc(at: 10, size: 16, address: 0x100)
    chunkA.free(at: 50, y)
    let x = chunkA.alloc(at: 50, size: 64, address: 0x200)
    chunkA.alloc(at: 80, size: 8, address: 0x300)
    var chunkB = writer.makeChunk(threadSerial: 2)
    chunkB.alloc(at: 5, size: 4, address: 0x500)
    chunkB.free(at: 50, x)
    chunkB.free(at: 60, AllocID(threadSerial: 1, counter: 9))
    chunkB.alloc(at: 70, size: 32, address: 0x400)
    writer.append(chunkB)
    writer.append(chunkA)
    writer.appendTrailer(endTime: 100)
    let trace = try TemporaryTrace(writer)

    // When the events are streamed
    let events = try trace.events().events

    // Then B's free of x comes after A's ALLOC of x, the free of the block never allocated
    // in its place, and the figures match every free but that one
    let order = events.map { event -> String in
      switch event {
      case .alloc(let alloc): "alloc \(alloc.id.threadSerial):\(alloc.id.counter)@\(alloc.time)"
      case .free(let free): "free \(free.id.threadSerial):\(free.id.counter)@\(free.time)"
      default: "other"
      }
    }
    #expect(
      order == [
        "alloc 2:0@5", "alloc 1:0@10", "free 1:0@50", "alloc 1:1@50", "free 1:1@50",
        "free 1:9@60", "alloc 2:1@70", "alloc 1:2@80",
      ])
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.freeCount == 2)
    #expect(stats.totals.unmatchedFreeCount == 1)
    #expect(stats.totals.liveBytes == 44)
    #expect(stats.totals.peakLiveBytes == 68)
  }

  @Test("events read in batches are the events read one by one, in the same order")
  func batchesMatchOneByOne() throws {
    // Given four threads whose chunks overlap in time, with ties, RSS samples, and frees of
    // other threads' blocks, some written before the chunk that allocates them
    var random = TraceDamageFuzzTests.Seeded(state: 10)
    var writer = TraceWriter()
    var counters: [UInt64] = [0, 0, 0, 0]
    var times: [UInt64] = [0, 0, 0, 0]
    var live: [AllocID] = []
    var chunks: [ChunkBuilder] = []
    for round in 0..<6 {
      for thread in 0..<4 {
        var chunk = ChunkBuilder(
          threadSerial: UInt32(thread + 1), firstAllocCounter: counters[thread])
        let start = UInt64(round) * 20_000 + random.next(upperBound: 9_000 as UInt64)
        var time = max(times[thread], start)
        for _ in 0..<(20 + random.next(upperBound: 40 as UInt64)) {
          time += random.next(upperBound: 3 as UInt64) * 1_024  // several events share a grain
          switch random.next(upperBound: 10 as UInt64) {
          case 0..<5:
            let address = Address(0x10_0000 + random.next(upperBound: 1 << 20 as UInt64) * 16)
            let size = 16 + random.next(upperBound: 200 as UInt64)
            live.append(chunk.alloc(at: time, size: size, address: address))
          case 5..<9 where !live.isEmpty:
            chunk.free(at: time, live.remove(at: Int(random.next(upperBound: UInt64(live.count)))))
          default:
            chunk.rss(at: time, residentBytes: time)
          }
        }
        counters[thread] = chunk.nextAllocID.counter
        times[thread] = time
        chunks.append(chunk)
      }
    }
    for index in chunks.indices.shuffled(using: &random) { writer.append(chunks[index]) }
    let trace = try TemporaryTrace(writer)
    let (expected, _) = try trace.events()

    // When they are read in batches of several sizes
    for limit in [1, 2, 7, 64, 4096] {
      var stream = try TraceReader(path: trace.path).events()
      var events: [TraceEvent] = []
      var batch: [TraceEvent] = []
      repeat {
        batch.removeAll()
        try stream.next(into: &batch, limit: limit)
        #expect(batch.count <= limit)
        events += batch
      } while batch.count == limit

      // Then each batch size gives the same events in the same order, and counts them
      #expect(events == expected, "batches of \(limit)")
      #expect(stream.eventCount == UInt64(expected.count))
    }
  }

  @Test("addresses are rebuilt from deltas, including going down")
  func addressDeltas() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let addresses: [Address] = [0x7FFF_0000_1000, 0x7FFF_0000_0800, 0x10, 0xFFFF_FFFF_FFFF_FFF0]
    for (index, address) in addresses.enumerated() {
      chunk.alloc(at: UInt64(index), size: 1, address: address)
    }
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let decoded = try trace.events().events.compactMap { event -> Address? in
      if case .alloc(let alloc) = event { return alloc.address } else { return nil }
    }
    #expect(decoded == addresses)
  }

  @Test("a chunk is read only when the merge reaches its base time")
  func lazyOpening() throws {
    // Given a good early chunk and a late one whose checksum is right but whose second record
    // has an unknown tag
    var writer = TraceWriter()
    var early = writer.makeChunk(threadSerial: 1)
    early.alloc(at: 10, size: 16, address: 0x10)
    early.alloc(at: 20, size: 16, address: 0x20)
    var late = writer.makeChunk(threadSerial: 2)
    late.alloc(at: 1_000, size: 16, address: 0x30)
    late.appendRaw([0x7F])
    writer.append(early)
    let lateHeader = writer.append(late)
    let trace = try TemporaryTrace(writer)
    // When the stream is read
    var stream = try TraceReader(path: trace.path).events()
    // Then the early events arrive before the damage is reported, naming the chunk
    #expect(try stream.next()?.time == 10)
    #expect(try stream.next()?.time == 20)
    let error = #expect(throws: TraceError.self) { try stream.next() }
    #expect(error?.offset == lateHeader.offset)
    #expect(error?.description.hasSuffix("is malformed (unknown record tag 127)") == true)
  }

  @Test("metadata records defined after their use are collected by the end")
  func lateMetadata() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10, stack: StackID(2))
    writer.append(chunk)
    var shim = writer.makeChunk(threadSerial: 0)
    shim.stack(StackID(2), parent: StackID(1), pc: 0xBBB)
    shim.stack(StackID(1), parent: .empty, pc: 0xAAA)
    shim.module(
      TraceModule(
        path: "/usr/lib/libdemo.so", loadBias: 0x1000, segments: [.init(start: 0, size: 0x10000)],
        buildID: [0xAB, 0xCD]))
    writer.append(shim)
    let trace = try TemporaryTrace(writer)
    let metadata = try trace.events().metadata
    #expect(metadata.frames(of: StackID(2)) == [0xBBB, 0xAAA])
    #expect(metadata.module(containing: 0x1100)?.path == "/usr/lib/libdemo.so")
    #expect(metadata.module(containing: 0x1100)?.buildID == [0xAB, 0xCD])
    #expect(metadata.module(containing: 0x20000) == nil)
  }

  @Test("stack ids far past the others are kept, resolved and redefined like the rest")
  func farStackIDs() {
    // Given nodes numbered as the shim numbers them, and one far past them, as a damaged or
    // hand-made trace may have, in the middle of a stack
    var metadata = TraceMetadata()
    let far = StackID(5_000_000_000)
    metadata.addStack(StackID(1), parent: .empty, pc: 0xA)
    metadata.addStack(StackID(2), parent: StackID(1), pc: 0xB)
    metadata.addStack(far, parent: StackID(2), pc: 0xC)
    metadata.addStack(StackID(3), parent: far, pc: 0xD)
    // Then the stack through it resolves, every node is listed once, and a node defined again
    // takes its new place
    #expect(metadata.frames(of: StackID(3)) == [0xD, 0xC, 0xB, 0xA])
    #expect(metadata.stackNodes.count == 4)
    #expect(metadata.stackNodes[far]?.parent == StackID(2))
    metadata.addStack(far, parent: StackID(1), pc: 0xE)
    #expect(metadata.frames(of: StackID(3)) == [0xD, 0xE, 0xA])
    #expect(metadata.returnAddresses == [0xA, 0xB, 0xD, 0xE])
  }

  @Test("marks from the shim's thread arrive in time order and leave the figures alone")
  func marks() throws {
    // Given a mark and a memory warning written by thread 0 between two allocations
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 10, size: 16, address: 0x10)
    chunk.alloc(at: 30, size: 16, address: 0x20)
    var shim = writer.makeChunk(threadSerial: 0)
    shim.mark(at: 20, name: "loaded")
    shim.mark(at: 25, kind: .memoryWarning, name: "urgent")
    writer.append(chunk)
    writer.append(shim)
    let trace = try TemporaryTrace(writer)
    // When the events are streamed
    let events = try trace.events().events
    // Then the marks sit between the allocations, with their names and kinds
    #expect(events.map(\.time) == [10, 20, 25, 30])
    #expect(
      events[1] == .mark(MarkEvent(time: 20, kind: .generation, name: "loaded", threadSerial: 0)))
    guard case .mark(let warning) = events[2] else {
      Issue.record("expected a mark, got \(events[2])")
      return
    }
    #expect(warning.kind == .memoryWarning)
    #expect(warning.name == "urgent")
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.totals.markCount == 2)
    #expect(stats.totals.liveBytes == 32)
  }
}
