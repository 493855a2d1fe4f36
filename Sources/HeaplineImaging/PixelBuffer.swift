import Heapline

#if canImport(Glibc)
  import Glibc
#endif

/// An RGBA8 image in memory mapped for it alone, outside malloc, and reported to Heapline as a
/// backing store for its whole life.
///
/// A decoded 6144×4096 photo is a 100 MB pixel buffer that a malloc tracker never sees. This
/// one maps its pixels with `mmap` and reports exactly width × height × 4 bytes under its
/// ``category`` when it is made; it reports the release and unmaps them when the last
/// reference goes away.
///
/// ```swift
/// let image = try PixelBuffer(width: 640, height: 480, category: "Thumbnails")
/// image[x: 10, y: 20] = RGBA(red: 255, green: 0, blue: 0)
/// Heapline.backingStoreBytes(inCategory: "Thumbnails").bytes  // 1_228_800
/// ```
public final class PixelBuffer: @unchecked Sendable {
  /// The backing-store category images go under unless told otherwise.
  public static let defaultCategory = "Decoded images"
  /// The largest buffer this type will map: 4 GiB, far above any real image, so that a file
  /// whose header claims an absurd size fails cleanly.
  public static let maximumByteCount = 1 << 32

  /// Width and height in pixels.
  public let size: ImageSize
  /// The backing-store category it is reported under.
  public let category: String
  /// The first byte of the first row; rows follow each other with no padding.
  public let baseAddress: UnsafeMutableRawPointer
  private let mappedByteCount: Int

  /// Maps a buffer of `width` × `height` pixels, all zero (transparent black).
  ///
  /// - Throws: ``ImagingError/invalidSize(width:height:)`` for an empty or absurd size,
  ///   ``ImagingError/outOfMemory(bytes:)`` when the system refuses the mapping.
  public init(width: Int, height: Int, category: String = PixelBuffer.defaultCategory)
    throws(ImagingError)
  {
    guard width > 0, height > 0, width <= Self.maximumByteCount / 4 / height else {
      throw .invalidSize(width: width, height: height)
    }
    let bytes = width * height * 4
    let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))
    let mapped = (bytes + pageSize - 1) / pageSize * pageSize
    let address = mmap(nil, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)
    guard let address, address != UnsafeMutableRawPointer(bitPattern: -1) else {
      throw .outOfMemory(bytes: bytes)
    }
    self.size = ImageSize(width: width, height: height)
    self.category = category
    self.baseAddress = address
    self.mappedByteCount = mapped
    Heapline.backingStore(allocated: bytes, category: category, id: id)
  }

  deinit {
    // Released before it is unmapped, so that a new mapping at the same address, reported
    // under the same id, never meets this one in the books.
    Heapline.backingStore(released: id)
    munmap(baseAddress, mappedByteCount)
  }

  /// The id it is reported under: its address.
  public var id: UInt64 { UInt64(UInt(bitPattern: baseAddress)) }
  /// Pixels per row.
  public var width: Int { size.width }
  /// Rows.
  public var height: Int { size.height }
  /// Bytes per row: width × 4.
  public var bytesPerRow: Int { size.width * 4 }
  /// Bytes of pixels: width × height × 4, the size reported as its backing store.
  public var byteCount: Int { size.rgbaByteCount }

  /// The first byte of row `y`.
  public func row(_ y: Int) -> UnsafeMutablePointer<UInt8> {
    precondition(y >= 0 && y < height, "row \(y) outside 0..<\(height)")
    return (baseAddress + y * bytesPerRow).assumingMemoryBound(to: UInt8.self)
  }

  /// The pixel at column `x` of row `y`.
  public subscript(x x: Int, y y: Int) -> RGBA {
    get {
      precondition(x >= 0 && x < width, "column \(x) outside 0..<\(width)")
      let p = row(y) + x * 4
      return RGBA(red: p[0], green: p[1], blue: p[2], alpha: p[3])
    }
    set {
      precondition(x >= 0 && x < width, "column \(x) outside 0..<\(width)")
      let p = row(y) + x * 4
      (p[0], p[1], p[2], p[3]) = (newValue.red, newValue.green, newValue.blue, newValue.alpha)
    }
  }

  /// Sets every pixel to `color`.
  public func fill(_ color: RGBA) {
    for y in 0..<height {
      let p = row(y)
      for x in 0..<width {
        (p[x * 4], p[x * 4 + 1], p[x * 4 + 2], p[x * 4 + 3]) =
          (color.red, color.green, color.blue, color.alpha)
      }
    }
  }
}

/// One 8-bit RGBA pixel, alpha not premultiplied.
public struct RGBA: Hashable, Sendable {
  public var red: UInt8
  public var green: UInt8
  public var blue: UInt8
  public var alpha: UInt8

  /// A color; opaque unless told otherwise.
  public init(red: UInt8, green: UInt8, blue: UInt8, alpha: UInt8 = 255) {
    self.red = red
    self.green = green
    self.blue = blue
    self.alpha = alpha
  }
}
