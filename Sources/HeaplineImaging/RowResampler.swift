/// Shrinks an image row by row into a ``PixelBuffer``, so that a decoder never holds more than
/// one source row: a box filter, where each target pixel is the rounded mean of the source
/// pixels that map onto it (source column x to target column x × tw / sw, and likewise rows).
///
/// Decoders feed it rows top to bottom, then call ``finish()``.
///
/// ```swift
/// var resampler = RowResampler(sourceWidth: 3072, sourceHeight: 2048, into: output)
/// for row in rows { resampler.consume(row) }
/// resampler.finish()
/// ```
struct RowResampler: ~Copyable {
  private let target: PixelBuffer
  private let sourceWidth: Int
  private let sourceHeight: Int
  /// Target column of each source column.
  private let columnOf: UnsafeMutablePointer<Int32>
  /// Source columns that fall in each target column.
  private let columnCount: UnsafeMutablePointer<UInt32>
  /// Channel sums of the target row in progress (64 bits: a huge reduction overflows 32).
  private let sums: UnsafeMutablePointer<UInt64>
  private var sourceRow = 0
  private var targetRow = 0
  private var rowsInSum: UInt32 = 0

  /// A resampler from `sourceWidth` × `sourceHeight` down to `target`'s size, which must be no
  /// larger in either direction.
  init(sourceWidth: Int, sourceHeight: Int, into target: PixelBuffer) {
    precondition(target.width <= sourceWidth && target.height <= sourceHeight)
    self.target = target
    self.sourceWidth = sourceWidth
    self.sourceHeight = sourceHeight
    columnOf = .allocate(capacity: sourceWidth)
    columnCount = .allocate(capacity: target.width)
    columnCount.initialize(repeating: 0, count: target.width)
    sums = .allocate(capacity: target.width * 4)
    sums.initialize(repeating: 0, count: target.width * 4)
    for x in 0..<sourceWidth {
      let column = x * target.width / sourceWidth
      columnOf[x] = Int32(column)
      columnCount[column] += 1
    }
  }

  deinit {
    columnOf.deallocate()
    columnCount.deallocate()
    sums.deallocate()
  }

  /// Adds source row number ``sourceRow`` (RGBA8, `sourceWidth` pixels).
  mutating func consume(_ row: UnsafePointer<UInt8>) {
    let rowTarget = sourceRow * target.height / sourceHeight
    if rowTarget != targetRow { flush() }
    targetRow = rowTarget
    for x in 0..<sourceWidth {
      let base = Int(columnOf[x]) * 4
      let pixel = row + x * 4
      sums[base] &+= UInt64(pixel[0])
      sums[base + 1] &+= UInt64(pixel[1])
      sums[base + 2] &+= UInt64(pixel[2])
      sums[base + 3] &+= UInt64(pixel[3])
    }
    rowsInSum += 1
    sourceRow += 1
  }

  /// Writes the last target row. Call once, after the last source row.
  mutating func finish() {
    flush()
  }

  /// Writes the target row in progress as the means of its sums, and starts the next.
  private mutating func flush() {
    guard rowsInSum > 0 else { return }
    let out = target.row(targetRow)
    for column in 0..<target.width {
      let count = UInt64(columnCount[column]) * UInt64(rowsInSum)
      for channel in 0..<4 {
        let index = column * 4 + channel
        out[index] = UInt8((sums[index] + count / 2) / count)
        sums[index] = 0
      }
    }
    rowsInSum = 0
  }
}
