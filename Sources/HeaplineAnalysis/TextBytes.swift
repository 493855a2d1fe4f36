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
struct TextBytes: ~Copyable {
  /// The bytes so far, `count` of them in room for `capacity`: memory of its own, so that
  /// appending a digit is a store, with no check that an array is unshared.
  private var base: UnsafeMutablePointer<UInt8>
  private var capacity: Int
  private(set) var count = 0
  /// The size past which ``flush(to:ifOver:)`` hands the bytes on.
  static let pieceSize = 64 * 1024

  init() {
    capacity = Self.pieceSize + 4096
    base = .allocate(capacity: capacity)
  }

  deinit { base.deallocate() }

  /// Where the next `bytes` go, once there is room for them; `count` is the caller's to move.
  @inline(__always)
  private mutating func room(_ bytes: Int) -> UnsafeMutablePointer<UInt8> {
    if count + bytes > capacity { grow(to: count + bytes) }
    return base + count
  }

  @inline(never)
  private mutating func grow(to needed: Int) {
    let larger = max(needed, 2 * capacity)
    let moved = UnsafeMutablePointer<UInt8>.allocate(capacity: larger)
    moved.update(from: base, count: count)
    base.deallocate()
    base = moved
    capacity = larger
  }

  mutating func append(_ text: String) {
    var text = text
    text.withUTF8 { append(utf8: $0) }
  }

  mutating func append(byte: UInt8) {
    room(1).pointee = byte
    count += 1
  }

  mutating func append(bytes more: [UInt8]) { more.withUnsafeBufferPointer { append(utf8: $0) } }

  /// Appends `more`, already UTF-8.
  mutating func append(utf8 more: UnsafeBufferPointer<UInt8>) {
    guard let start = more.baseAddress else { return }
    room(more.count).update(from: start, count: more.count)
    count += more.count
  }

  mutating func append(spaces spaceCount: Int) {
    room(spaceCount).update(repeating: 0x20, count: spaceCount)
    count += spaceCount
  }

  /// `value` in decimal, as `String(value)` writes it.
  mutating func append(decimal value: UInt64) {
    var digits = 1
    var power: UInt64 = 10
    while digits < 20 && value >= power {
      digits += 1
      power = power &* 10
    }
    append(value, radix: 10, digits: digits)
  }

  /// `value` in decimal with a minus sign when negative, as `String(value)` writes it.
  mutating func append(decimal value: Int) {
    if value < 0 { append(byte: 0x2D) }
    append(decimal: UInt64(value.magnitude))
  }

  /// `value` in lowercase hexadecimal, as `String(value, radix: 16)` writes it.
  mutating func append(hex value: UInt64) {
    append(value, radix: 16, digits: max(1, (64 - value.leadingZeroBitCount + 3) / 4))
  }

  /// Nanoseconds as exact decimal seconds, as ``CSV/seconds(_:)`` writes them: `12.000345678`.
  mutating func append(seconds nanoseconds: UInt64) {
    append(decimal: nanoseconds / 1_000_000_000)
    append(byte: 0x2E)
    append(nanoseconds % 1_000_000_000, radix: 10, digits: 9)
  }

  /// The last `digits` digits of `value`, written from the last.
  @inline(__always)
  private mutating func append(_ value: UInt64, radix: UInt64, digits: Int) {
    let start = room(digits)
    var rest = value
    for at in stride(from: digits - 1, through: 0, by: -1) {
      let digit = UInt8(truncatingIfNeeded: rest % radix)
      start[at] = digit < 10 ? 0x30 + digit : 0x57 + digit
      rest /= radix
    }
    count += digits
  }

  /// Hands the bytes to `output` once there are more than `limit` of them (any with a limit
  /// of 0), and starts again with an empty buffer.
  mutating func flush(to output: inout some TextOutput, ifOver limit: Int = pieceSize)
    throws(AnalysisError)
  {
    guard count > limit else { return }
    try output.write(utf8: UnsafeBufferPointer(start: base, count: count))
    count = 0
  }
}
