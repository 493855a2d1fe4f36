import CHeaplineImaging

/// Decodes JPEG data with libjpeg-turbo into a ``PixelBuffer``, at display size when given
/// one.
///
/// With a ``maxSize``, it lets libjpeg scale in the DCT by 1/2, 1/4 or 1/8 (the largest that
/// keeps the image at least as big as the target, which costs a fraction of a full decode)
/// and then resamples the rows down to the exact size as they come. The full-size image is
/// never in memory. Its transient mallocs go under the category ``mallocCategory``; the output
/// buffer is a backing store under ``category``.
///
/// ```swift
/// let decoder = JPEGDecoder(maxSize: ImageSize(width: 1920, height: 1080))
/// let image = try decoder.decode(contentsOf: "photo.jpg")  // 1620×1080 for a 6144×4096 photo
/// ```
public struct JPEGDecoder: Sendable {
  /// The Heapline category of the decoder's own mallocs.
  public static let mallocCategory = "JPEGDecoder"

  /// The largest size to decode to, keeping the aspect ratio; `nil` for the full size.
  public var maxSize: ImageSize?
  /// The backing-store category of the images it returns.
  public var category: String

  /// A decoder to `maxSize` (or full size), whose images go under `category`.
  public init(maxSize: ImageSize? = nil, category: String = PixelBuffer.defaultCategory) {
    self.maxSize = maxSize
    self.category = category
  }

  /// Decodes the JPEG file at `path`.
  public func decode(contentsOf path: String) throws(ImagingError) -> PixelBuffer {
    // The file's bytes are the decoder's transient memory too.
    try DecoderSupport.inScope(Self.mallocCategory) { (callerScope) throws(ImagingError) in
      try decode(DecoderSupport.contents(of: path), callerScope: callerScope)
    }
  }

  /// Decodes JPEG data.
  ///
  /// - Throws: ``ImagingError/truncated(format:message:)`` when the data stops early,
  ///   ``ImagingError/corrupt(format:message:)`` for data that is not a valid JPEG, and
  ///   ``ImagingError/unsupported(format:message:)`` for CMYK images. Nothing stays allocated.
  public func decode(_ data: [UInt8]) throws(ImagingError) -> PixelBuffer {
    try DecoderSupport.inScope(Self.mallocCategory) { (callerScope) throws(ImagingError) in
      try decode(data, callerScope: callerScope)
    }
  }

  private func decode(_ data: [UInt8], callerScope: UInt32) throws(ImagingError) -> PixelBuffer {
    try data.withUnsafeBufferPointer { (bytes) throws(ImagingError) in
      guard let decoder = hli_jpeg_decoder_create(bytes.baseAddress, bytes.count) else {
        throw .outOfMemory(bytes: 0)
      }
      defer { hli_jpeg_decoder_destroy(decoder) }
      return try decode(with: decoder, callerScope: callerScope)
    }
  }

  /// The DCT scale denominator for decoding `full` to at least `target`: 8, 4, 2 or 1.
  /// libjpeg's output is ⌈full / d⌉ in each direction.
  static func scaleDenominator(full: ImageSize, target: ImageSize) -> Int {
    for denominator in [8, 4, 2] {
      let width = (full.width + denominator - 1) / denominator
      let height = (full.height + denominator - 1) / denominator
      if width >= target.width && height >= target.height { return denominator }
    }
    return 1
  }

  private func decode(with decoder: OpaquePointer, callerScope: UInt32) throws(ImagingError)
    -> PixelBuffer
  {
    func check(_ code: Int32) throws(ImagingError) {
      try DecoderSupport.check(
        code, format: "JPEG", message: DecoderSupport.text(hli_jpeg_decoder_message(decoder)))
    }
    var width: UInt32 = 0
    var height: UInt32 = 0
    try check(hli_jpeg_read_header(decoder, &width, &height))
    let full = ImageSize(width: Int(width), height: Int(height))
    let target = try DecoderSupport.targetSize(full, maxSize: maxSize)
    let denominator = Self.scaleDenominator(full: full, target: target)
    try check(hli_jpeg_start(decoder, UInt32(denominator), &width, &height))
    let scaled = ImageSize(width: Int(width), height: Int(height))
    let output = try DecoderSupport.makeOutput(target, category: category, callerScope: callerScope)
    if scaled == target {
      // No resampling: libjpeg writes straight into the output's rows.
      var y = 0
      while y < target.height {
        var read: UInt32 = 0
        let count = UInt32(min(16, target.height - y))
        try check(hli_jpeg_read_rows(decoder, output.row(y), output.bytesPerRow, count, &read))
        guard read > 0 else { throw .truncated(format: "JPEG", message: "no more rows") }
        y += Int(read)
      }
    } else {
      try resample(decoder, from: scaled, into: output, check: check)
    }
    try check(hli_jpeg_finish(decoder))
    return output
  }

  /// Reads the DCT-scaled rows a few at a time and shrinks them into `output`.
  private func resample(
    _ decoder: OpaquePointer, from scaled: ImageSize, into output: PixelBuffer,
    check: (Int32) throws(ImagingError) -> Void
  ) throws(ImagingError) {
    let batch = 16
    let stride = scaled.width * 4
    let rows = UnsafeMutablePointer<UInt8>.allocate(capacity: stride * batch)
    defer { rows.deallocate() }
    var resampler = RowResampler(
      sourceWidth: scaled.width, sourceHeight: scaled.height, into: output)
    var y = 0
    while y < scaled.height {
      var read: UInt32 = 0
      try check(
        hli_jpeg_read_rows(decoder, rows, stride, UInt32(min(batch, scaled.height - y)), &read))
      guard read > 0 else { throw .truncated(format: "JPEG", message: "no more rows") }
      for index in 0..<Int(read) { resampler.consume(rows + index * stride) }
      y += Int(read)
    }
    resampler.finish()
  }
}
