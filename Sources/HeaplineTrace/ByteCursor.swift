/// Reads little-endian integers and LEB128 varints from a byte array, front to back.
///
/// Every read checks the remaining length and throws ``ByteCursor/Failure`` instead of trapping,
/// so the callers can turn a short or malformed buffer into a ``TraceError`` with an offset.
///
/// ```swift
/// var cursor = ByteCursor([0xE5, 0x8E, 0x26])
/// try cursor.readVarint() // 624485
/// ```
public struct ByteCursor: Sendable {
  /// Why a read failed.
  public enum Failure: Error, Sendable, Equatable {
    /// The buffer ended before the value did.
    case truncated
    /// A varint ran over 10 bytes or past 64 bits.
    case overlongVarint
  }

  /// The bytes being read.
  public let bytes: [UInt8]
  /// Index of the next byte to read.
  public private(set) var position: Int
  /// Index just past the last byte to read: the cursor reads `bytes[position..<end]`.
  public let end: Int

  /// Creates a cursor at `position` of `bytes`, reading up to `end` (the end of `bytes` when
  /// `nil`).
  public init(_ bytes: [UInt8], position: Int = 0, end: Int? = nil) {
    self.bytes = bytes
    self.end = max(0, min(end ?? bytes.count, bytes.count))
    self.position = max(0, min(position, self.end))
  }

  /// The number of bytes left to read.
  public var remaining: Int { end - position }
  /// Whether every byte has been read.
  public var isAtEnd: Bool { position >= end }

  /// The next byte, without reading it; `nil` at the end.
  public func peekUInt8() -> UInt8? { position < end ? bytes[position] : nil }

  /// Reads one byte.
  @inline(__always)
  public mutating func readUInt8() throws(Failure) -> UInt8 {
    guard position < end else { throw .truncated }
    defer { position += 1 }
    return bytes[position]
  }

  /// Reads a little-endian `u16`.
  public mutating func readUInt16() throws(Failure) -> UInt16 {
    UInt16(truncatingIfNeeded: try readLittleEndian(byteCount: 2))
  }

  /// Reads a little-endian `u32`.
  public mutating func readUInt32() throws(Failure) -> UInt32 {
    UInt32(truncatingIfNeeded: try readLittleEndian(byteCount: 4))
  }

  /// Reads a little-endian `u64`.
  public mutating func readUInt64() throws(Failure) -> UInt64 {
    try readLittleEndian(byteCount: 8)
  }

  /// Reads an unsigned LEB128 varint of at most 10 bytes.
  @inline(__always)
  public mutating func readVarint() throws(Failure) -> UInt64 {
    // Most varints are one byte: no loop for them.
    if position < end, bytes[position] < 0x80 {
      defer { position += 1 }
      return UInt64(bytes[position])
    }
    return try readLongVarint()
  }

  private mutating func readLongVarint() throws(Failure) -> UInt64 {
    var result: UInt64 = 0
    var shift: UInt64 = 0
    while true {
      let byte = try readUInt8()
      let group = UInt64(byte & 0x7F)
      // The tenth byte may carry only the top bit of a u64; more would be silently lost.
      if shift == 63 && group > 1 { throw .overlongVarint }
      result |= group << shift
      if byte & 0x80 == 0 { return result }
      shift += 7
      if shift > 63 { throw .overlongVarint }
    }
  }

  /// Reads a zigzag-encoded signed varint.
  @inline(__always)
  public mutating func readSignedVarint() throws(Failure) -> Int64 {
    let zigzag = try readVarint()
    return Int64(bitPattern: (zigzag >> 1) ^ (0 &- (zigzag & 1)))
  }

  /// Reads `count` bytes.
  public mutating func readBytes(_ count: Int) throws(Failure) -> ArraySlice<UInt8> {
    guard count >= 0, count <= remaining else { throw .truncated }
    defer { position += count }
    return bytes[position..<(position + count)]
  }

  /// Reads a varint length, then that many bytes.
  public mutating func readLengthPrefixedBytes() throws(Failure) -> ArraySlice<UInt8> {
    let length = try readVarint()
    guard length <= UInt64(remaining) else { throw .truncated }
    return try readBytes(Int(length))
  }

  private mutating func readLittleEndian(byteCount: Int) throws(Failure) -> UInt64 {
    guard byteCount <= remaining else { throw .truncated }
    var value: UInt64 = 0
    for index in 0..<byteCount {
      value |= UInt64(bytes[position + index]) << (8 * UInt64(index))
    }
    position += byteCount
    return value
  }
}
