import HeaplineTrace
import Testing

@Suite("The reader validates and indexes trace files")
struct TraceReaderTests {
  /// Two chunks of thread 1 and a trailer.
  static func twoChunks() -> TraceWriter {
    var writer = TraceWriter(
      header: TraceHeader(pid: 7, flags: TraceConstants.recordedInProcessFlag))
    var first = writer.makeChunk(threadSerial: 1)
    first.alloc(at: 0, size: 16, address: 0x10)
    writer.append(first)
    var second = writer.makeChunk(threadSerial: 1)
    second.alloc(at: 100, size: 32, address: 0x20)
    second.alloc(at: 200, size: 32, address: 0x40)
    writer.append(second)
    writer.appendTrailer(endTime: 300)
    return writer
  }

  @Test("a complete trace indexes its chunks and trailer from headers alone")
  func index() throws {
    let writer = Self.twoChunks()
    let trace = try TemporaryTrace(writer)
    let reader = try TraceReader(path: trace.path)
    #expect(reader.header.pid == 7)
    #expect(reader.header.isRecordedInProcess)
    #expect(reader.chunks.map(\.offset) == writer.chunks.map(\.offset))
    // Each chunk defines its info before its first ALLOC; the second ticks once between its two
    #expect(reader.chunks.map(\.recordCount) == [2, 4])
    #expect(reader.chunks[1].firstAllocCounter == 1)
    #expect(reader.isComplete)
    #expect(reader.incompletenessWarning == nil)
    #expect(
      reader.trailer == TraceTrailer(endTime: 300, eventChunkCount: 2, allocCount: 3, freeCount: 0))
  }

  @Test("a trace without a trailer is readable, incomplete, and says where it stops")
  func missingTrailer() throws {
    // Given a trace cut right after its second chunk
    var writer = Self.twoChunks()
    let end = Int(writer.chunks[1].endOffset)
    writer.bytes.removeSubrange(end...)
    let trace = try TemporaryTrace(writer)
    // When it is read
    let reader = try TraceReader(path: trace.path)
    // Then it is incomplete, every event is there, and the warning names the last chunk
    #expect(!reader.isComplete)
    #expect(reader.lastCompleteChunkOffset == writer.chunks[1].offset)
    #expect(try trace.events().events.count == 3)
    let offset = writer.chunks[1].offset
    #expect(
      reader.incompletenessWarning == "trace '\(trace.path)' has no trailer (the process was killed"
        + " or is still running); read 2 complete chunks up to offset \(offset)")
  }

  @Test("a trace cut in the middle of a chunk reads every complete chunk and names the cut")
  func truncatedMidChunk() throws {
    // Given a trace cut 2 bytes into the second chunk's payload
    var writer = Self.twoChunks()
    let chunk = writer.chunks[1]
    writer.bytes.removeSubrange((Int(chunk.payloadOffset) + 2)...)
    let trace = try TemporaryTrace(writer)
    // When it is read
    let reader = try TraceReader(path: trace.path)
    // Then the first chunk's one allocation is read, and the 50 bytes left are named
    #expect(reader.chunks.map(\.offset) == [writer.chunks[0].offset])
    #expect(reader.cutShort == CutShort(offset: chunk.offset, bytes: 50))
    #expect(try trace.events().events.count == 1)
    #expect(
      reader.incompletenessWarning
        == "trace '\(trace.path)' was cut short: 50 bytes of a partial chunk at offset"
        + " \(chunk.offset) were not read (read 1 complete chunks up to offset 48)")
  }

  @Test("a trace cut inside a chunk header is cut short the same way")
  func truncatedChunkHeader() throws {
    var writer = Self.twoChunks()
    let chunk = writer.chunks[1]
    writer.bytes.removeSubrange((Int(chunk.offset) + 20)...)
    let trace = try TemporaryTrace(writer)
    let reader = try TraceReader(path: trace.path)
    #expect(reader.cutShort == CutShort(offset: chunk.offset, bytes: 20))
    #expect(reader.chunks.count == 1)
  }

  @Test("a chunk whose length runs past a trailer at the end of the file is damaged, not cut")
  func lengthPastTrailer() throws {
    // Given a complete trace whose first chunk claims 100,000 more payload bytes, resealed
    var writer = Self.twoChunks()
    var chunk = writer.chunks[0]
    let payload = Array(writer.bytes[Int(chunk.payloadOffset)..<Int(chunk.endOffset)])
    chunk.storedLength += 100_000
    chunk.rawLength += 100_000
    chunk.seal(over: payload)
    writer.bytes.replaceSubrange(Int(chunk.offset)..<Int(chunk.payloadOffset), with: chunk.encoded)
    let trace = try TemporaryTrace(writer)
    // Then reading fails at that chunk, naming the trailer
    let trailer = UInt64(writer.bytes.count - 112)
    #expect(
      throws: TraceError(
        path: trace.path,
        reason: .chunkPastTrailer(
          chunk: chunk.offset, needed: 48 + UInt64(chunk.storedLength), trailer: trailer))
    ) { try TraceReader(path: trace.path) }
  }

  @Test("a file that is not a trace is rejected at offset 0")
  func badMagic() throws {
    var writer = Self.twoChunks()
    writer.bytes[0] = UInt8(ascii: "X")
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try TraceReader(path: trace.path) }
    #expect(
      error?.description
        == "corrupt trace '\(trace.path)': bad magic at offset 0 (not a Heapline trace)")
  }

  @Test("an empty file, a short header and an unknown version are rejected; version 3 still reads")
  func badHeaders() throws {
    let empty = try TemporaryTrace(bytes: [])
    #expect(throws: TraceError(path: empty.path, reason: .emptyFile)) {
      try TraceReader(path: empty.path)
    }
    let short = try TemporaryTrace(bytes: Array(TraceHeader().encoded.prefix(20)))
    #expect(throws: TraceError(path: short.path, reason: .truncatedFileHeader(remaining: 20))) {
      try TraceReader(path: short.path)
    }
    var future = Self.twoChunks()
    future.bytes[8] = 7
    let version = try TemporaryTrace(future)
    let error = #expect(throws: TraceError.self) { try TraceReader(path: version.path) }
    #expect(error?.reason == .unsupportedVersion(7))
    #expect(
      error?.description.hasSuffix(
        "format version 7 at offset 8 (this heapline reads versions 3 to 6)") == true)
    // A version 3 trace, from before chunks carried flags, still reads: its ALLOC as version 4
    // wrote it (tag 1, dt 0, 48 bytes, stack 0, category 3, address 0x10 as a zigzag delta)
    var three = TraceWriter(header: TraceHeader(version: 3))
    var chunk = three.makeChunk(threadSerial: 1)
    chunk.appendRaw([0x01, 0, 48, 0, 3, 0x20])
    var header = three.append(chunk)
    header.flags = []
    three.reseal(header)
    let recorded = try TemporaryTrace(three)
    #expect(try TraceReader(path: recorded.path).header.version == 3)
    #expect(try recorded.events().events.count == 1)
    var past = Self.twoChunks()
    past.bytes[8] = 2
    let old = try TemporaryTrace(past)
    #expect(throws: TraceError(path: old.path, reason: .unsupportedVersion(2))) {
      try TraceReader(path: old.path)
    }
  }

  @Test("a missing file fails with the system's reason")
  func missingFile() {
    let error = #expect(throws: TraceError.self) {
      try TraceReader(path: "/nonexistent/heapline.trace")
    }
    #expect(
      error?.description
        == "cannot open trace '/nonexistent/heapline.trace': No such file or directory")
  }

  @Test("a damaged chunk magic names the chunk")
  func badChunkMagic() throws {
    var writer = Self.twoChunks()
    writer.bytes[Int(writer.chunks[1].offset)] = 0
    let trace = try TemporaryTrace(writer)
    #expect(
      throws: TraceError(path: trace.path, reason: .badChunkMagic(chunk: writer.chunks[1].offset))
    ) {
      try TraceReader(path: trace.path)
    }
  }

  @Test("a payload byte changed after writing fails the checksum when the trace is opened")
  func checksumMismatch() throws {
    var writer = Self.twoChunks()
    let chunk = writer.chunks[0]
    writer.bytes[Int(chunk.payloadOffset) + 1] ^= 0x01
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try TraceReader(path: trace.path) }
    #expect(
      error?.description
        == "corrupt trace '\(trace.path)': checksum mismatch in chunk at offset \(chunk.offset)")
  }

  @Test("a flipped bit in a chunk header's base time or in the file header fails its checksum")
  func headerChecksums() throws {
    var writer = Self.twoChunks()
    writer.bytes[Int(writer.chunks[1].offset) + 24 + 5] ^= 0x04  // base time, outside the payload
    let trace = try TemporaryTrace(writer)
    #expect(
      throws: TraceError(
        path: trace.path, reason: .checksumMismatch(chunk: writer.chunks[1].offset))
    ) { try TraceReader(path: trace.path) }

    var header = Self.twoChunks()
    header.bytes[16] ^= 0x01  // the start time
    let damaged = try TemporaryTrace(header)
    let error = #expect(throws: TraceError.self) { try TraceReader(path: damaged.path) }
    #expect(
      error?.description
        == "corrupt trace '\(damaged.path)': file header checksum at offset 44 does not match the"
        + " header")
  }

  @Test("a record cut short inside its chunk names both offsets")
  func truncatedRecord() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10)
    chunk.appendRaw([0x01, 0x00, 0x80])  // ALLOC: dt, then a size varint that never ends
    let header = writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let recordOffset = header.payloadOffset + UInt64(chunk.payloadBytes.count - 3)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description
        == "corrupt trace '\(trace.path)': record at offset \(recordOffset) in chunk at offset"
        + " \(header.offset) is truncated")
  }

  @Test("an unknown record tag and a wrong record count are reported")
  func malformedRecords() throws {
    var writer = TraceWriter()
    var tagged = writer.makeChunk(threadSerial: 1)
    tagged.appendRaw([0x7F])
    let taggedHeader = writer.append(tagged)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(error?.description.hasSuffix("is malformed (unknown record tag 127)") == true)
    #expect(error?.offset == taggedHeader.offset)

    var counted = TraceWriter()
    var chunk = counted.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10)
    chunk.appendRaw([], records: 1)
    let countedHeader = counted.append(chunk)
    let countedTrace = try TemporaryTrace(counted)
    #expect(
      throws: TraceError(
        path: countedTrace.path,
        reason: .recordCountMismatch(chunk: countedHeader.offset, expected: 3, found: 2))
    ) {
      try countedTrace.events()
    }
  }

  @Test("a block larger than the address space is a malformed record, not a wrapped sum")
  func aBlockOfTwoToTheSixtyFourBytesIsMalformed() throws {
    // A size of 2^64 - 1 in an INFO (checksums sealed, as a forger would) summed to a small
    // "Bytes allocated" and a peak of 18,446,744,073,709,551,615 B
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 48, address: 0x10)
    chunk.alloc(at: 1, size: .max, address: 0x100)
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description.hasSuffix("is malformed (a block of 18446744073709551615 bytes)") == true,
      "\(String(describing: error))")
  }

  @Test("bytes after the trailer are an error")
  func dataAfterTrailer() throws {
    var writer = Self.twoChunks()
    writer.bytes += [1, 2, 3]
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try TraceReader(path: trace.path) }
    #expect(
      error?.description.hasSuffix(
        "3 bytes follow the trailer at offset \(writer.chunks[1].endOffset)") == true)
  }
}
