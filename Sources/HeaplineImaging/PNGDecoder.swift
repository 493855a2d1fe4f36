import CHeaplineImaging

/// Decodes PNG data with libpng into a ``PixelBuffer``, at display size when given one.
///
/// It reads the image a row at a time and shrinks each row into the output as it comes, so
/// the full-size image is never held. An interlaced PNG is the exception: its seven passes
/// each touch every row, so it is decoded whole into a temporary full-size buffer (a backing
/// store under ``interlacedCategory``, visible in the trace) and shrunk from there. Transient
/// mallocs go under ``mallocCategory``.
///
/// ```swift
/// let image = try PNGDecoder(maxSize: ImageSize(width: 256, height: 256)).decode(bytes)
/// ```
public struct PNGDecoder: Sendable {
  /// The Heapline category of the decoder's own mallocs.
  public static let mallocCategory = "PNGDecoder"
  /// The backing-store category of the full-size buffer an interlaced image needs.
  public static let interlacedCategory = "PNGDecoder interlaced image"

  /// The largest size to decode to, keeping the aspect ratio; `nil` for the full size.
  public var maxSize: ImageSize?
  /// The backing-store category of the images it returns.
  public var category: String

  /// A decoder to `maxSize` (or full size), whose images go under `category`.
  public init(maxSize: ImageSize? = nil, category: String = PixelBuffer.defaultCategory) {
    self.maxSize = maxSize
    self.category = category
  }

  /// Decodes the PNG file at `path`.
  public func decode(contentsOf path: String) throws(ImagingError) -> PixelBuffer {
    // The file's bytes are the decoder's transient memory too.
    try DecoderSupport.inScope(Self.mallocCategory) { (callerScope) throws(ImagingError) in
      try decode(DecoderSupport.contents(of: path), callerScope: callerScope)
    }
  }

  /// Decodes PNG data.
  ///
  /// - Throws: ``ImagingError/truncated(format:message:)`` when the data stops early and
  ///   ``ImagingError/corrupt(format:message:)`` for data that is not a valid PNG. Nothing
  ///   stays allocated.
  public func decode(_ data: [UInt8]) throws(ImagingError) -> PixelBuffer {
    try DecoderSupport.inScope(Self.mallocCategory) { (callerScope) throws(ImagingError) in
      try decode(data, callerScope: callerScope)
    }
  }

  private func decode(_ data: [UInt8], callerScope: UInt32) throws(ImagingError) -> PixelBuffer {
    try data.withUnsafeBufferPointer { (bytes) throws(ImagingError) in
      guard let decoder = hli_png_decoder_create(bytes.baseAddress, bytes.count) else {
        throw .outOfMemory(bytes: 0)
      }
      defer { hli_png_decoder_destroy(decoder) }
      return try decode(with: decoder, callerScope: callerScope)
    }
  }

  private func decode(with decoder: OpaquePointer, callerScope: UInt32) throws(ImagingError)
    -> PixelBuffer
  {
    func check(_ code: Int32) throws(ImagingError) {
      try DecoderSupport.check(
        code, format: "PNG", message: DecoderSupport.text(hli_png_decoder_message(decoder)))
    }
    var width: UInt32 = 0
    var height: UInt32 = 0
    var interlaced: Int32 = 0
    try check(hli_png_read_header(decoder, &width, &height, &interlaced))
    let full = ImageSize(width: Int(width), height: Int(height))
    let target = try DecoderSupport.targetSize(full, maxSize: maxSize)
    let output = try DecoderSupport.makeOutput(target, category: category, callerScope: callerScope)
    if interlaced != 0 {
      try decodeInterlaced(decoder, full: full, into: output, check: check)
    } else if full == target {
      for y in 0..<target.height { try check(hli_png_read_row(decoder, output.row(y))) }
    } else {
      let row = UnsafeMutablePointer<UInt8>.allocate(capacity: full.width * 4)
      defer { row.deallocate() }
      var resampler = RowResampler(sourceWidth: full.width, sourceHeight: full.height, into: output)
      for _ in 0..<full.height {
        try check(hli_png_read_row(decoder, row))
        resampler.consume(row)
      }
      resampler.finish()
    }
    try check(hli_png_finish(decoder))
    return output
  }

  private func decodeInterlaced(
    _ decoder: OpaquePointer, full: ImageSize, into output: PixelBuffer,
    check: (Int32) throws(ImagingError) -> Void
  ) throws(ImagingError) {
    if full == output.size {
      try check(hli_png_read_image(decoder, output.row(0), output.bytesPerRow))
      return
    }
    let whole = try PixelBuffer(
      width: full.width, height: full.height, category: Self.interlacedCategory)
    try check(hli_png_read_image(decoder, whole.row(0), whole.bytesPerRow))
    var resampler = RowResampler(sourceWidth: full.width, sourceHeight: full.height, into: output)
    for y in 0..<full.height { resampler.consume(whole.row(y)) }
    resampler.finish()
  }
}
