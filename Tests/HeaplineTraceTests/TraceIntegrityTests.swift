import HeaplineTrace
import Testing

/// What the reader checks beyond each chunk's checksum: the order of a thread's chunks, the
/// trailer's counts and end time, reserved bytes, and what a trace without a trailer still
/// tells (its lost events, its end).
@Suite("The reader checks every field it can")
struct TraceIntegrityTests {
  /// Thread 1 writes two chunks of 2 and 3 allocations; the second frees one block of the first.
  static func twoChunks() -> TraceWriter {
    var writer = TraceWriter()
    var first = writer.makeChunk(threadSerial: 1)
    let block = first.alloc(at: 10, size: 16, address: 0x10)
    first.alloc(at: 20, size: 16, address: 0x20)
    writer.append(first)
    var second = writer.makeChunk(threadSerial: 1)
    for time: UInt64 in [30, 40, 50] { second.alloc(at: time, size: 32, address: Address(time)) }
    second.free(at: 60, block)
    writer.append(second)
    return writer
  }

  @Test("a chunk sealed with seal(over:) reads; a field changed after sealing does not")
  func sealing() throws {
    let payload: [UInt8] = [0x06, 0x00, 0x80, 0x01]  // RSS: dt 0, 128 bytes
    var header = ChunkHeader(
      offset: 48, kind: .events, encoding: .raw, threadSerial: 0, threadID: 9,
      storedLength: 4, rawLength: 4, baseTime: 5, firstAllocCounter: 0, recordCount: 1,
      checksum: 0)
    header.seal(over: payload)
    let good = try TemporaryTrace(bytes: TraceHeader().encoded + header.encoded + payload)
    #expect(try good.events().events == [.rss(RSSSample(time: 5, residentBytes: 128))])
    header.baseTime = 6
    let moved = try TemporaryTrace(bytes: TraceHeader().encoded + header.encoded + payload)
    #expect(throws: TraceError(path: moved.path, reason: .checksumMismatch(chunk: 48))) {
      try TraceReader(path: moved.path)
    }
  }

  @Test("a thread whose next chunk starts before its previous one ended is out of order")
  func baseTimeGoesBack() throws {
    // Given thread 1's second chunk (by alloc counter) with a base time before the first's
    var writer = TraceWriter()
    var first = writer.makeChunk(threadSerial: 1)
    first.alloc(at: 500, size: 16, address: 0x10)
    writer.append(first)
    var second = ChunkBuilder(threadSerial: 1, firstAllocCounter: 1)
    second.alloc(at: 100, size: 16, address: 0x20)
    let late = writer.append(second)
    let trace = try TemporaryTrace(writer)
    // Then opening the trace fails at that chunk
    let error = #expect(throws: TraceError.self) { try TraceReader(path: trace.path) }
    #expect(
      error?.description
        == "corrupt trace '\(trace.path)': chunk at offset \(late.offset) is out of order (its"
        + " alloc counter 1 follows thread 1's chunk at offset 48, but its base time 100 ns is"
        + " before that chunk's 500 ns)")
  }

  @Test("a gap in a thread's alloc counters names the chunk before it, even without a trailer")
  func allocCounterGap() throws {
    // Given a trace with a chunk of thread 1 (2 allocations) cut out between two others
    var writer = Self.twoChunks()
    var third = writer.makeChunk(threadSerial: 1)
    third.alloc(at: 70, size: 8, address: 0x70)
    writer.append(third)
    let removed = writer.chunks[1]
    writer.bytes.removeSubrange(Int(removed.offset)..<Int(removed.endOffset))
    let trace = try TemporaryTrace(writer)
    // When it is read
    let reader = try TraceReader(path: trace.path)
    // Then the first chunk, which ends at counter 2, does not reach the next one's 5
    var stream = reader.events()
    let error = #expect(throws: TraceError.self) { while try stream.next() != nil {} }
    #expect(
      error?.description
        == "corrupt trace '\(trace.path)': chunk at offset 48 ends at alloc counter 2, but thread"
        + " 1's next chunk starts at 5: allocations are missing")
  }

  @Test("ALLOC and FREE records that do not add up to the trailer are an error at the end")
  func trailerRecordCounts() throws {
    var writer = Self.twoChunks()
    writer.appendTrailer(
      TraceTrailer(endTime: 100, eventChunkCount: 2, allocCount: 6, freeCount: 1))
    let trace = try TemporaryTrace(writer)
    let trailer = writer.chunks[1].endOffset
    #expect(
      throws: TraceError(
        path: trace.path,
        reason: .trailerMismatch(
          trailer: trailer, "it counts 6 ALLOC records, the chunks hold 5"))
    ) { try trace.events() }
    var frees = Self.twoChunks()
    frees.appendTrailer(TraceTrailer(endTime: 100, eventChunkCount: 2, allocCount: 5, freeCount: 0))
    let freeTrace = try TemporaryTrace(frees)
    let error = #expect(throws: TraceError.self) { try freeTrace.events() }
    #expect(
      error?.description
        == "corrupt trace '\(freeTrace.path)': the trailer at offset \(trailer) does not match the"
        + " chunks (it counts 0 FREE records, the chunks hold 1)")
  }

  @Test("a record or a chunk later than the trailer's end time is an error")
  func timesPastTheEnd() throws {
    // A record at 60 in a trace that ends at 55
    var writer = Self.twoChunks()
    writer.appendTrailer(endTime: 55)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description.hasSuffix("is malformed (time 60 ns is after the end time 55 ns)") == true)
    #expect(error?.offset == writer.chunks[1].offset)
    // A chunk that starts at 30 in a trace that ends at 25
    var early = Self.twoChunks()
    early.appendTrailer(endTime: 25)
    let earlyTrace = try TemporaryTrace(early)
    let chunk = early.chunks[1]
    #expect(
      throws: TraceError(
        path: earlyTrace.path,
        reason: .trailerMismatch(
          trailer: chunk.endOffset,
          "chunk at offset \(chunk.offset) starts at 30 ns, after the end time 25 ns"))
    ) { try TraceReader(path: earlyTrace.path) }
  }

  @Test("a chunk flag bit the reader does not know is an error naming its offset")
  func reservedBytes() throws {
    for (byte, value): (Int, UInt8) in [(6, 4), (6, 0x80), (7, 1)] {
      var writer = Self.twoChunks()
      writer.bytes[Int(writer.chunks[0].offset) + byte] |= value
      let trace = try TemporaryTrace(writer)
      #expect(throws: TraceError(path: trace.path, reason: .nonzeroReserved(offset: 54))) {
        try TraceReader(path: trace.path)
      }
    }
  }

  @Test("a chunk without stacks is flagged, and the metadata pass skips it unread")
  func chunksWithoutStacksAreSkipped() throws {
    // Given one chunk of allocations and frees that also hides a STACK record its header does
    // not count, and one that defines a stack as the shim does
    var writer = TraceWriter()
    var plain = writer.makeChunk(threadSerial: 1)
    let block = plain.alloc(at: 10, size: 16, address: 0x10, stack: StackID(1))
    plain.free(at: 20, block)
    plain.appendRaw([0x03, 0x05, 0x00, 0x90, 0x81, 0x01])  // version 4 STACK 5 at pc 0x4090
    writer.append(plain)
    var defining = writer.makeChunk(threadSerial: 1)
    defining.stack(StackID(1), parent: .empty, pc: 0x4010)
    defining.alloc(at: 30, size: 16, address: 0x20, stack: StackID(1))
    let unflagged = writer.append(defining)
    writer.appendTrailer(endTime: 100)
    let trace = try TemporaryTrace(writer)
    let reader = try TraceReader(path: trace.path)
    // Then the header says which chunk holds no stacks, the metadata pass finds the other's
    // stack without reading it, and a full read rejects the record it should not hold
    #expect(
      reader.chunks.map { $0.flags } == [[.noStacksOrModules, .sideSection], [.sideSection]])
    #expect(!unflagged.flags.contains(.noStacksOrModules))
    let (returnAddresses, _) = try reader.stacksAndModules(of: reader.chunks)
    #expect(returnAddresses == [0x4010])
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description.contains(
        "record tag 3 in a chunk whose header says it holds no stacks or modules") == true)
  }

  @Test("a flagged chunk's side section may hold no STACK, PC or MODULE record either")
  func flaggedSideSectionsHoldNoStacks() throws {
    // Given a chunk whose header says it holds no stacks, with a PC record in its side section
    // that its header does not count (read as any other, where the events' were rejected)
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    let block = chunk.alloc(at: 10, size: 16, address: 0x10, stack: StackID(1))
    chunk.free(at: 20, block)
    chunk.appendRawSide([0x52, 0x00, 0x90, 0x81, 0x01])  // PC 0 at 0x4090 (zigzag)
    writer.append(chunk)
    writer.appendTrailer(endTime: 100)
    let trace = try TemporaryTrace(writer)
    #expect(
      try TraceReader(path: trace.path).chunks.first?.flags.contains(.noStacksOrModules) == true)
    // Then a full read rejects it
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description.contains(
        "record tag 82 in a chunk whose header says it holds no stacks or modules") == true)
  }

  @Test("a trace without a trailer still tells its lost events and its last event's time")
  func lostEventsWithoutATrailer() throws {
    // Given a cut trace whose shim thread wrote two LOST records
    var writer = Self.twoChunks()
    var shim = writer.makeChunk(threadSerial: 0)
    shim.lost(at: 15, reason: .outOfMemory, count: 4)
    shim.lost(at: 25, reason: .insideShim, count: 9)
    writer.append(shim)
    let trace = try TemporaryTrace(writer)
    let reader = try TraceReader(path: trace.path)
    // Then the notices give their sum by reason, and the end is the last event at 60 ns
    #expect(
      try reader.lostEvents() == LostEvents(total: 13, byReason: [.outOfMemory: 4, .insideShim: 9]))
    #expect(try reader.endTime() == 60)
    #expect(reader.endTimeLowerBound == 30)
    #expect(
      try reader.notices() == [
        "trace '\(trace.path)' has no trailer (the process was killed or is still running); read"
          + " 3 complete chunks up to offset \(writer.chunks[2].offset)",
        "trace '\(trace.path)': 13 allocations and frees were not recorded (9 calls made inside"
          + " the shim's own work, 4 the shim could not map memory): the figures are not exact",
      ])
  }

  @Test("frames of a library unloaded before the end keep the module it was loaded as")
  func unloadedModule() throws {
    // Given a plugin's module record, then a later module map without it (it was dlclosed)
    var writer = TraceWriter()
    var early = writer.makeChunk(threadSerial: 0)
    let app = TraceModule(
      path: "/no/such/app", loadBias: 0, segments: [.init(start: 0x1000, size: 0x1000)])
    let plugin = TraceModule(
      path: "/no/such/libplugin.so", loadBias: 0x7000_0000,
      segments: [.init(start: 0, size: 0x2000)])
    early.module(app)
    early.module(plugin)
    early.rss(at: 10, residentBytes: 1)
    writer.append(early)
    var late = writer.makeChunk(threadSerial: 0)
    late.rss(at: 20, residentBytes: 1)
    late.module(app)
    writer.append(late)
    let trace = try TemporaryTrace(writer)
    // Then a return address inside the plugin still resolves to it
    let metadata = try trace.events().metadata
    let frames = Symbolizer(toolPath: nil).symbolize([0x7000_0123], modules: metadata.modules)
    #expect(frames[0x7000_0123]?.first?.modulePath == plugin.path)
    #expect(frames[0x7000_0123]?.first?.moduleAddress == 0x123)
  }
}

@Suite("Finishing a trace the shim could not finish")
struct TraceTallyTests {
  @Test("a trailer made from the tally of a cut trace makes it read whole, with every record")
  func trailerFromTally() throws {
    // Given the damage fixture cut 30 bytes into its trailer's header
    var writer = DamageFixture.writer()
    let trailerOffset = Int(writer.chunks.last!.endOffset)
    writer.bytes.removeSubrange((trailerOffset + 30)...)
    let trace = try TemporaryTrace(writer)
    let cut = try TraceReader(path: trace.path)
    #expect(cut.cutShort == CutShort(offset: UInt64(trailerOffset), bytes: 30))
    // When its tally is counted and a trailer built from it replaces the partial chunk
    let tally = try cut.tally()
    #expect(tally.chunkCount == UInt64(writer.chunks.count))
    #expect(tally.allocCount == DamageFixture.allocations)
    #expect(tally.freeCount == DamageFixture.frees)
    #expect(tally.lostEvents == DamageFixture.lostEvents)
    #expect(tally.lastTime == 71_005)
    writer.bytes.removeSubrange(trailerOffset...)
    writer.appendTrailer(
      TraceTrailer(
        endTime: tally.lastTime, eventChunkCount: tally.chunkCount, allocCount: tally.allocCount,
        freeCount: tally.freeCount, endReason: .endedUnfinished, exitStatus: 137,
        lostEvents: tally.lostEvents, flags: .writtenByRecorder))
    let finished = try TemporaryTrace(writer)
    // Then the trace is complete, and every check of the stream passes
    let reader = try TraceReader(path: finished.path)
    #expect(reader.isComplete)
    #expect(try finished.events().events.count == 70 + 31 + 2 + 2)
    #expect(
      reader.trailer?.unfinishedEnding
        == "the process ended before the shim could finish: heapline record recovered 0 chunks;"
        + " exit status 137")
  }
}
