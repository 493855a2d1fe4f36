/// Appends little-endian integers and LEB128 varints to a byte array: the inverse of
/// ``ByteCursor``, used by ``TraceWriter``.
public struct ByteWriter: Sendable {
  /// The bytes written so far.
  public private(set) var bytes: [UInt8] = []

  /// Creates an empty writer.
  public init() {}

  /// Appends one byte.
  public mutating func appendUInt8(_ value: UInt8) { bytes.append(value) }
  /// Appends a little-endian `u16`.
  public mutating func appendUInt16(_ value: UInt16) { appendLittleEndian(UInt64(value), 2) }
  /// Appends a little-endian `u32`.
  public mutating func appendUInt32(_ value: UInt32) { appendLittleEndian(UInt64(value), 4) }
  /// Appends a little-endian `u64`.
  public mutating func appendUInt64(_ value: UInt64) { appendLittleEndian(value, 8) }

  /// Appends bytes as they are.
  public mutating func append<Bytes: Sequence>(_ other: Bytes) where Bytes.Element == UInt8 {
    bytes.append(contentsOf: other)
  }

  /// Appends an unsigned LEB128 varint.
  public mutating func appendVarint(_ value: UInt64) {
    var rest = value
    while rest >= 0x80 {
      bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
      rest >>= 7
    }
    bytes.append(UInt8(rest))
  }

  /// Appends a zigzag-encoded signed varint.
  public mutating func appendSignedVarint(_ value: Int64) {
    appendVarint(UInt64(bitPattern: (value << 1) ^ (value >> 63)))
  }

  /// Appends a varint length, then the bytes.
  public mutating func appendLengthPrefixed<Bytes: Collection>(_ other: Bytes)
  where Bytes.Element == UInt8 {
    appendVarint(UInt64(other.count))
    append(other)
  }

  private mutating func appendLittleEndian(_ value: UInt64, _ byteCount: Int) {
    for index in 0..<byteCount {
      bytes.append(UInt8(truncatingIfNeeded: value >> (8 * UInt64(index))))
    }
  }
}
