import Heapline
import HeaplineImaging
import Testing

/// The parent of every imaging suite. Serialized: its tests count backing stores and answer
/// memory warnings, which are process-wide, so they must not overlap one another.
@Suite(.serialized) struct ImagingTests {}

/// Small images with known pixels, made in the tests (never the demo's big photos).
enum TestImages {
  /// Four solid quadrants: red, green, blue, white; opaque.
  static func quadrants(width: Int, height: Int, category: String) throws -> PixelBuffer {
    let image = try PixelBuffer(width: width, height: height, category: category)
    for y in 0..<height {
      for x in 0..<width {
        image[x: x, y: y] = quadrantColor(x: x, y: y, width: width, height: height)
      }
    }
    return image
  }

  static func quadrantColor(x: Int, y: Int, width: Int, height: Int) -> RGBA {
    switch (x < width / 2, y < height / 2) {
    case (true, true): RGBA(red: 255, green: 0, blue: 0)
    case (false, true): RGBA(red: 0, green: 255, blue: 0)
    case (true, false): RGBA(red: 0, green: 0, blue: 255)
    case (false, false): RGBA(red: 255, green: 255, blue: 255)
    }
  }

  /// Every pixel different: red is x, green is y, blue their sum, alpha their difference.
  static func ramp(width: Int, height: Int, category: String) throws -> PixelBuffer {
    let image = try PixelBuffer(width: width, height: height, category: category)
    for y in 0..<height {
      for x in 0..<width {
        image[x: x, y: y] = RGBA(
          red: UInt8(x & 255), green: UInt8(y & 255), blue: UInt8((x + y) & 255),
          alpha: UInt8((255 + x - y) & 255))
      }
    }
    return image
  }

  /// Whether two colors differ by at most `tolerance` in every channel (JPEG is lossy).
  static func close(_ a: RGBA, _ b: RGBA, tolerance: Int = 12) -> Bool {
    abs(Int(a.red) - Int(b.red)) <= tolerance && abs(Int(a.green) - Int(b.green)) <= tolerance
      && abs(Int(a.blue) - Int(b.blue)) <= tolerance && a.alpha == b.alpha
  }

  /// The bytes live now in a backing-store category.
  static func liveBackingBytes(_ category: String) -> Int {
    Heapline.backingStoreBytes(inCategory: category).bytes
  }
}
