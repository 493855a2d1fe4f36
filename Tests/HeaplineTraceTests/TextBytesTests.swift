import Testing

@testable import HeaplineAnalysis

/// TextBytes writes numbers as digits straight into bytes: each must read exactly as the
/// `String` that the slower paths wrote before it.
@Suite("Numbers written as bytes")
struct TextBytesTests {
  static let values: [UInt64] = [
    0, 1, 9, 10, 15, 16, 99, 100, 255, 256, 999_999_999, 1_000_000_000, 1_234_567_890_123,
    9_999_999_999_999_999_999, 10_000_000_000_000_000_000, UInt64(Int64.max), UInt64.max - 1,
    UInt64.max,
  ]

  static func text(_ build: (inout TextBytes) -> Void) -> String {
    var bytes = TextBytes()
    build(&bytes)
    var output = StringOutput()
    try? bytes.flush(to: &output, ifOver: 0)
    return output.text
  }

  /// Each side of every power of ten and of sixteen, where a number gains a digit.
  static let boundaries: [UInt64] = (0...19).flatMap { exponent -> [UInt64] in
    let ten = (0..<exponent).reduce(1 as UInt64) { power, _ in power * 10 }
    return [ten - 1, ten, ten + 1]
  } + (1...15).flatMap { nibbles -> [UInt64] in
    let sixteen: UInt64 = 1 << (4 * nibbles)
    return [sixteen - 1, sixteen]
  }

  @Test("decimal and hexadecimal digits equal String's, at every digit-count boundary")
  func digits() {
    for value in Self.values + Self.boundaries {
      #expect(Self.text { $0.append(decimal: value) } == String(value))
      #expect(Self.text { $0.append(hex: value) } == String(value, radix: 16))
    }
    for value in [0, -1, 1, -10, 10, Int.min + 1, Int.min, Int.max] {
      #expect(Self.text { $0.append(decimal: value) } == String(value))
    }
  }

  @Test("seconds read as CSV writes them, nine decimals always")
  func seconds() {
    for nanoseconds in Self.values + Self.boundaries {
      #expect(Self.text { $0.append(seconds: nanoseconds) } == CSV.seconds(nanoseconds))
    }
  }

  @Test("text past the buffer's first size is kept whole, and handed on in order")
  func growth() throws {
    // Given more text in one append than the buffer first holds, between two numbers
    let long = String(repeating: "abcdefghij", count: TextBytes.pieceSize / 5)
    var bytes = TextBytes()
    bytes.append(decimal: 42 as UInt64)
    bytes.append(long)
    bytes.append(spaces: 3)
    bytes.append(hex: 255)
    // When it is flushed once past the piece size, then at the end
    var output = StringOutput()
    try bytes.flush(to: &output)
    #expect(bytes.count == 0)
    bytes.append(byte: 0x21)
    try bytes.flush(to: &output, ifOver: 0)
    // Then the output is every byte, in order
    #expect(output.text == "42" + long + "   ff!")
  }
}
