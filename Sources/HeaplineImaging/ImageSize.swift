/// The width and height of an image, in pixels.
///
/// ```swift
/// let photo = ImageSize(width: 6144, height: 4096)
/// photo.fitting(within: ImageSize(width: 1920, height: 1080))  // 1620×1080
/// ```
public struct ImageSize: Hashable, Sendable, CustomStringConvertible {
  /// Pixels per row.
  public var width: Int
  /// Rows.
  public var height: Int

  /// A size of `width` × `height` pixels.
  public init(width: Int, height: Int) {
    self.width = width
    self.height = height
  }

  /// The bytes of an RGBA8 image of this size: width × height × 4.
  public var rgbaByteCount: Int { width * height * 4 }

  /// The largest size of the same aspect ratio (rounded down, at least 1×1) that fits within
  /// `bounds`; this size itself when it fits already, since decoders never enlarge.
  public func fitting(within bounds: ImageSize) -> ImageSize {
    guard width > bounds.width || height > bounds.height else { return self }
    // Compare the ratios exactly, in integers: which bound limits the scale?
    if width * bounds.height <= height * bounds.width {
      return ImageSize(width: max(1, width * bounds.height / height), height: bounds.height)
    }
    return ImageSize(width: bounds.width, height: max(1, height * bounds.width / width))
  }

  /// `6144×4096`.
  public var description: String { "\(width)×\(height)" }
}
