import CHeaplineImaging

/// Encodes RGBA8 pixels as a JPEG file in memory, with libjpeg-turbo: whole images, or rows
/// in bands from a generator, so that an image of any size can be written without ever being
/// in memory at once.
///
/// ```swift
/// let jpeg = try JPEGEncoder(quality: 85).encode(image)
/// let big = try JPEGEncoder().encode(size: ImageSize(width: 6144, height: 4096)) { y, row in
///   for x in 0..<6144 { row[x * 4] = UInt8(x & 255); row[x * 4 + 3] = 255 }
/// }
/// ```
public struct JPEGEncoder: Sendable {
  /// The libjpeg quality, 1 to 100.
  public var quality: Int

  /// An encoder at `quality` (1 to 100).
  public init(quality: Int = 85) {
    self.quality = min(100, max(1, quality))
  }

  /// Encodes `image`. Its alpha is dropped: JPEG has none.
  public func encode(_ image: PixelBuffer) throws(ImagingError) -> [UInt8] {
    try encode(size: image.size) { y, row in
      row.update(from: image.row(y), count: image.bytesPerRow)
    }
  }

  /// Encodes an image of `size` whose rows `fillRow` writes, top to bottom, into a buffer of
  /// one row (width × 4 bytes of RGBA).
  public func encode(
    size: ImageSize, fillRow: (_ y: Int, _ row: UnsafeMutablePointer<UInt8>) -> Void
  ) throws(ImagingError) -> [UInt8] {
    guard size.width > 0, size.height > 0, size.width <= 65_500, size.height <= 65_500 else {
      throw .invalidSize(width: size.width, height: size.height)
    }
    guard let encoder = hli_jpeg_encoder_create() else { throw .outOfMemory(bytes: 0) }
    defer { hli_jpeg_encoder_destroy(encoder) }
    func check(_ code: Int32) throws(ImagingError) {
      try DecoderSupport.check(
        code, format: "JPEG", message: DecoderSupport.text(hli_jpeg_encoder_message(encoder)))
    }
    try check(
      hli_jpeg_encoder_start(encoder, UInt32(size.width), UInt32(size.height), Int32(quality)))
    let row = UnsafeMutablePointer<UInt8>.allocate(capacity: size.width * 4)
    defer { row.deallocate() }
    for y in 0..<size.height {
      fillRow(y, row)
      try check(hli_jpeg_encoder_write_rows(encoder, row, size.width * 4, 1))
    }
    var data: UnsafeMutablePointer<UInt8>?
    var count = 0
    try check(hli_jpeg_encoder_finish(encoder, &data, &count))
    defer { hli_free(data) }
    return Array(UnsafeBufferPointer(start: data, count: count))
  }
}
