/// Text built as UTF-8 bytes and handed to a ``TextOutput`` in pieces of about 64 KiB.
///
/// Exporters that write millions of rows (the object list, a report's JSON with a large
/// `--top`) spent most of their time making a `String` for every number and joining them, and
/// freeing them again. Here numbers are written as digits straight into one reused buffer, and
/// a `String` is made only once per piece handed on.
///
/// ```swift
/// var text = TextBytes()
/// text.append(decimal: 42)
/// text.append(",")
/// try text.flush(to: &output)
/// ```
struct TextBytes {
  private(set) var bytes: [UInt8] = []
  /// The size past which ``flush(to:ifOver:)`` hands the bytes on.
  static let pieceSize = 64 * 1024

  init() { bytes.reserveCapacity(Self.pieceSize + 4096) }

  mutating func append(_ text: String) { bytes.append(contentsOf: text.utf8) }

  mutating func append(byte: UInt8) { bytes.append(byte) }

  mutating func append(bytes more: [UInt8]) { bytes.append(contentsOf: more) }

  mutating func append(spaces count: Int) {
    bytes.append(contentsOf: repeatElement(0x20, count: count))
  }

  /// `value` in decimal, as `String(value)` writes it.
  mutating func append(decimal value: UInt64) { append(value, radix: 10, minimumDigits: 1) }

  /// `value` in decimal with a minus sign when negative, as `String(value)` writes it.
  mutating func append(decimal value: Int) {
    if value < 0 { bytes.append(0x2D) }
    append(decimal: UInt64(value.magnitude))
  }

  /// `value` in lowercase hexadecimal, as `String(value, radix: 16)` writes it.
  mutating func append(hex value: UInt64) { append(value, radix: 16, minimumDigits: 1) }

  /// Nanoseconds as exact decimal seconds, as ``CSV/seconds(_:)`` writes them: `12.000345678`.
  mutating func append(seconds nanoseconds: UInt64) {
    append(decimal: nanoseconds / 1_000_000_000)
    bytes.append(0x2E)
    append(nanoseconds % 1_000_000_000, radix: 10, minimumDigits: 9)
  }

  /// Room made for the digits, then filled from the last: no `String`, and no reversal.
  @inline(__always)
  private mutating func append(_ value: UInt64, radix: UInt64, minimumDigits: Int) {
    var digits = 1
    var rest = value / radix
    while rest > 0 {
      digits += 1
      rest /= radix
    }
    let count = max(digits, minimumDigits)
    let start = bytes.count
    bytes.append(contentsOf: repeatElement(0x30, count: count))
    bytes.withUnsafeMutableBufferPointer { buffer in
      var rest = value
      var at = start + count - 1
      while rest > 0 {
        let digit = UInt8(truncatingIfNeeded: rest % radix)
        buffer[at] = digit < 10 ? 0x30 + digit : 0x57 + digit
        rest /= radix
        at -= 1
      }
    }
  }

  /// Hands the bytes to `output` once there are more than `limit` of them (any with a limit
  /// of 0), and starts again with an empty buffer.
  mutating func flush(to output: inout some TextOutput, ifOver limit: Int = pieceSize)
    throws(AnalysisError)
  {
    guard bytes.count > limit else { return }
    try output.write(String(decoding: bytes, as: UTF8.self))
    bytes.removeAll(keepingCapacity: true)
  }
}
