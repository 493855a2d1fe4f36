/// A malloc size class: the category of raw allocations, named as Object Alloc names them.
///
/// Index `i` up to 64 stands for `16 × i` bytes. Above, index `65 + 4e + (s − 1)`, with `s`
/// from 1 to 4, stands for `2^(10+e) + s × 2^(8+e)` bytes: four classes per power of two. An
/// allocation falls in the smallest class that holds it.
///
/// ```swift
/// SizeClass(containing: 40).name    // "Malloc 48 Bytes"
/// SizeClass(containing: 1025).name  // "Malloc 1.25 KiB"
/// ```
public struct SizeClass: Hashable, Sendable {
  /// The class index, which is also its ``CategoryID`` raw value.
  public var index: UInt32

  /// The number of fine-grained classes, 16 bytes apart, from 0 to 1024 bytes.
  static let linearClassCount: UInt32 = 64

  /// Wraps a class index.
  public init(index: UInt32) { self.index = index }

  /// The smallest class that holds `size` bytes.
  public init(containing size: UInt64) {
    if size <= 16 * UInt64(Self.linearClassCount) {
      index = UInt32((size + 15) / 16)
      return
    }
    // Find e with 2^(10+e) < size <= 2^(11+e), then the quarter step s that holds size.
    let e = UInt32(63 - (size - 1).leadingZeroBitCount) - 10
    let base = UInt64(1) << (10 + UInt64(e))
    let step = UInt64(1) << (8 + UInt64(e))
    let s = UInt32((size - base + step - 1) / step)
    index = Self.linearClassCount + 1 + 4 * e + (s - 1)
  }

  /// The largest size the class holds, or `nil` when the index is beyond 64-bit sizes.
  public var bytes: UInt64? {
    if index <= Self.linearClassCount { return 16 * UInt64(index) }
    let offset = index - Self.linearClassCount - 1
    let e = UInt64(offset / 4)
    let s = UInt64(offset % 4) + 1
    // Classes past 2^63 describe sizes no 64-bit process can ask for; the sum below catches
    // the last few that overflow.
    guard 10 + e <= 63 else { return nil }
    let base = UInt64(1) << (10 + e)
    let (sum, overflow) = base.addingReportingOverflow(s << (8 + e))
    return overflow ? nil : sum
  }

  /// The category name: `Malloc 48 Bytes`, `Malloc 1.25 KiB`, `Malloc 2.00 MiB`.
  public var name: String {
    guard let bytes else { return "Malloc size class \(index)" }
    return "Malloc " + ByteCountText.binary(bytes)
  }
}
