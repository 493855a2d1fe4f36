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
    // The digits are about a third of the bits; one comparison settles the count.
    let estimate = ((64 - value.leadingZeroBitCount) * 1233) >> 12
    let digits = value >= Self.powerOfTen(estimate) ? estimate + 1 : max(estimate, 1)
    appendDecimal(value, digits: digits)
  }

  /// 10 to the power `exponent`, for 0 to 19: a table the compiler makes of the cases.
  @inline(__always)
  private static func powerOfTen(_ exponent: Int) -> UInt64 {
    switch exponent {
    case 0: 1
    case 1: 10
    case 2: 100
    case 3: 1_000
    case 4: 10_000
    case 5: 100_000
    case 6: 1_000_000
    case 7: 10_000_000
    case 8: 100_000_000
    case 9: 1_000_000_000
    case 10: 10_000_000_000
    case 11: 100_000_000_000
    case 12: 1_000_000_000_000
    case 13: 10_000_000_000_000
    case 14: 100_000_000_000_000
    case 15: 1_000_000_000_000_000
    case 16: 10_000_000_000_000_000
    case 17: 100_000_000_000_000_000
    case 18: 1_000_000_000_000_000_000
    default: 10_000_000_000_000_000_000
    }
  }

  /// The two digits of each number below 100, in order.
  private static let digitPairs: StaticString = """
    0001020304050607080910111213141516171819\
    2021222324252627282930313233343536373839\
    4041424344454647484950515253545556575859\
    6061626364656667686970717273747576777879\
    8081828384858687888990919293949596979899
    """

  /// The last `digits` decimal digits of `value`, two at a time from the last.
  @inline(__always)
  private mutating func appendDecimal(_ value: UInt64, digits: Int) {
    let start = room(digits)
    let pairs = Self.digitPairs.utf8Start
    var rest = value
    var at = digits
    while at >= 2 {
      let pair = Int(truncatingIfNeeded: rest % 100) * 2
      rest /= 100
      at -= 2
      start[at] = pairs[pair]
      start[at + 1] = pairs[pair + 1]
    }
    if at == 1 { start[0] = 0x30 + UInt8(truncatingIfNeeded: rest % 10) }
    count += digits
  }

  /// `value` in decimal with a minus sign when negative, as `String(value)` writes it.
  mutating func append(decimal value: Int) {
    if value < 0 { append(byte: 0x2D) }
    append(decimal: UInt64(value.magnitude))
  }

  /// `value` in lowercase hexadecimal, as `String(value, radix: 16)` writes it.
  mutating func append(hex value: UInt64) {
    let digits = max(1, (64 - value.leadingZeroBitCount + 3) / 4)
    let start = room(digits)
    var rest = value
    for at in stride(from: digits - 1, through: 0, by: -1) {
      let digit = UInt8(truncatingIfNeeded: rest & 15)
      start[at] = digit < 10 ? 0x30 + digit : 0x57 + digit
      rest >>= 4
    }
    count += digits
  }

  /// Nanoseconds as exact decimal seconds, as ``CSV/seconds(_:)`` writes them: `12.000345678`.
  mutating func append(seconds nanoseconds: UInt64) {
    append(decimal: nanoseconds / 1_000_000_000)
    append(byte: 0x2E)
    appendDecimal(nanoseconds % 1_000_000_000, digits: 9)
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
