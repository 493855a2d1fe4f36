import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Chunks stored as one zstd frame")
struct ZstdChunkTests {
  @Test("a zstd chunk decodes to the same events as a raw one")
  func decodes() throws {
    // Given the same records written raw and compressed
    func trace(_ encoding: PayloadEncoding) throws -> TemporaryTrace {
      var writer = TraceWriter()
      var chunk = writer.makeChunk(threadSerial: 1)
      for index in 0..<500 as Range<UInt64> {
        let id = chunk.alloc(at: index * 10, size: 48, address: Address(0x1000 + index * 48))
        if index % 2 == 0 { chunk.free(at: index * 10 + 5, id) }
      }
      let header = writer.append(chunk, encoding: encoding)
      #expect(header.encoding == encoding)
      if encoding == .zstd { #expect(header.storedLength < header.rawLength) }
      writer.appendTrailer(endTime: 10_000)
      return try TemporaryTrace(writer)
    }
    let raw = try trace(.raw)
    let compressed = try trace(.zstd)
    // When both are read, then the events and statistics agree
    #expect(try compressed.events().events == raw.events().events)
    let stats = try Statistics(contentsOf: compressed.path)
    #expect(stats.totals.allocationCount == 500)
    #expect(stats.totals.liveBytes == 250 * 48)
  }

  @Test("a zstd frame that does not decode names its chunk")
  func undecodable() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10)
    let header = writer.append(chunk, encoding: .zstd)
    // Damage the frame but keep the checksum right, so decompression itself must notice.
    let payloadStart = Int(header.payloadOffset)
    let payloadEnd = payloadStart + Int(header.storedLength)
    for index in (payloadStart + 4)..<payloadEnd { writer.bytes[index] = 0xFF }
    writer.reseal(header)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    #expect(
      error?.description.contains("payload of chunk at offset \(header.offset) does not decompress")
        == true)
  }

  @Test("a truncated record inside a zstd chunk is located in the decompressed payload")
  func recordOffsetInDecompressedPayload() throws {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.alloc(at: 0, size: 16, address: 0x10)
    let start = chunk.payloadBytes.count
    chunk.appendRaw([0x02, 0x00])
    let header = writer.append(chunk, encoding: .zstd)
    let trace = try TemporaryTrace(writer)
    let error = #expect(throws: TraceError.self) { try trace.events() }
    let expected =
      "record at offset \(start) of the decompressed payload of chunk at offset \(header.offset)"
      + " is truncated"
    #expect(error?.description.hasSuffix(expected) == true)
  }
}
