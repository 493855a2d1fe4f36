import Testing

@testable import HeaplineTrace

@Suite("Byte coding: varints, zigzag, FNV-1a")
struct ByteCodingTests {
  @Test("a varint written by ByteWriter reads back, for edge values")
  func varintRoundTrip() throws {
    // Given values at every 7-bit boundary and the extremes
    let values: [UInt64] = [0, 1, 127, 128, 16_383, 16_384, 1 << 35, UInt64.max - 1, UInt64.max]
    var writer = ByteWriter()
    for value in values { writer.appendVarint(value) }
    // When they are read back
    var cursor = ByteCursor(writer.bytes)
    let read = try values.map { _ in try cursor.readVarint() }
    // Then they are unchanged and nothing is left
    #expect(read == values)
    #expect(cursor.isAtEnd)
  }

  @Test("the LEB128 example of the spec decodes to 624485")
  func knownVarint() throws {
    var cursor = ByteCursor([0xE5, 0x8E, 0x26])
    #expect(try cursor.readVarint() == 624_485)
  }

  @Test("zigzag maps small negative deltas to small varints and back")
  func zigzag() throws {
    let values: [Int64] = [0, -1, 1, -2, 2, -4096, 4096, .min, .max]
    var writer = ByteWriter()
    for value in values { writer.appendSignedVarint(value) }
    #expect(Array(writer.bytes.prefix(3)) == [0, 1, 2])
    var cursor = ByteCursor(writer.bytes)
    #expect(try values.map { _ in try cursor.readSignedVarint() } == values)
  }

  @Test("a varint cut short or longer than 64 bits fails instead of trapping")
  func badVarints() {
    var truncated = ByteCursor([0x80, 0x80])
    #expect(throws: ByteCursor.Failure.truncated) { try truncated.readVarint() }
    var overlong = ByteCursor([UInt8](repeating: 0xFF, count: 10) + [0x01])
    #expect(throws: ByteCursor.Failure.overlongVarint) { try overlong.readVarint() }
    var tooWide = ByteCursor([UInt8](repeating: 0xFF, count: 9) + [0x02])
    #expect(throws: ByteCursor.Failure.overlongVarint) { try tooWide.readVarint() }
  }

  @Test("fixed-width reads are little endian and bounds-checked")
  func littleEndian() throws {
    var cursor = ByteCursor([0x48, 0x4C, 0x43, 0x4B, 0x01])
    #expect(try cursor.readUInt32() == TraceConstants.chunkMagic)
    #expect(throws: ByteCursor.Failure.truncated) { try cursor.readUInt16() }
  }

  @Test("FNV-1a 32 matches the reference vectors")
  func fnv() {
    #expect(FNV1a.hash([UInt8]()) == 0x811C_9DC5)
    #expect(FNV1a.hash(Array("a".utf8)) == 0xE40C_292C)
    #expect(FNV1a.hash(Array("foobar".utf8)) == 0xBF9C_F968)
  }
}
