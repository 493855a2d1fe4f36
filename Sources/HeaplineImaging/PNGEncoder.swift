import CHeaplineImaging

/// Encodes RGBA8 pixels as a PNG file in memory, with libpng.
///
/// ```swift
/// let png = try PNGEncoder().encode(image)
/// let interlaced = try PNGEncoder(interlaced: true).encode(image)
/// ```
public struct PNGEncoder: Sendable {
  /// Whether to write an Adam7-interlaced file.
  public var interlaced: Bool

  /// An encoder, interlacing or not.
  public init(interlaced: Bool = false) {
    self.interlaced = interlaced
  }

  /// Encodes `image`, alpha included.
  public func encode(_ image: PixelBuffer) throws(ImagingError) -> [UInt8] {
    var data: UnsafeMutablePointer<UInt8>?
    var count = 0
    var message = [CChar](repeating: 0, count: 200)
    let code = hli_png_encode(
      image.row(0), UInt32(image.width), UInt32(image.height), image.bytesPerRow,
      interlaced ? 1 : 0, &data, &count, &message)
    let text = String(
      decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    try DecoderSupport.check(code, format: "PNG", message: text)
    defer { hli_free(data) }
    return Array(UnsafeBufferPointer(start: data, count: count))
  }
}
