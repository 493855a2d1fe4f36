import HeaplineImaging

#if canImport(Glibc)
  import Glibc
#endif

/// Makes the slideshow's test photos: large JPEGs of a few MB each, encoded a row at a time
/// (the full image is never in memory), and kept in a directory between runs.
struct SlideGenerator {
  var size: ImageSize
  var count: Int
  var directory: String

  /// The default directory: one per size under $TMPDIR.
  static func defaultDirectory(for size: ImageSize) -> String {
    let temporary = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    return "\(temporary)/heapline-slideshow-\(size.width)x\(size.height)"
  }

  func path(ofSlide index: Int) -> String { "\(directory)/slide-\(index).jpg" }

  /// Writes the slides that are not there yet; returns how many it wrote.
  func prepare() throws -> Int {
    mkdir(directory, 0o755)
    var written = 0
    for index in 0..<count where access(path(ofSlide: index), R_OK) != 0 {
      let started = Clock.now
      let bytes = try JPEGEncoder(quality: 85).encode(size: size) { y, row in
        Self.paint(row: row, y: y, width: size.width, height: size.height, slide: index)
      }
      // Written under a temporary name and renamed, so a run cut short leaves no half file.
      let temporary = path(ofSlide: index) + ".tmp"
      try write(bytes, to: temporary)
      rename(temporary, path(ofSlide: index))
      print(
        "generated \(path(ofSlide: index)): \(size), \(bytes.count / 1024) KiB in "
          + Clock.milliseconds(since: started))
      written += 1
    }
    return written
  }

  /// A photo-like pattern that compresses to a few MB: smooth gradients under a fine
  /// texture, different on every slide.
  static func paint(
    row: UnsafeMutablePointer<UInt8>, y: Int, width: Int, height: Int, slide: Int
  ) {
    let shift = slide * 37
    for x in 0..<width {
      let texture = ((x &* 7) ^ (y &* 13) ^ (x &* y >> 5)) & 0x0F
      row[x * 4] = UInt8(truncatingIfNeeded: x * 255 / width + texture + shift)
      row[x * 4 + 1] = UInt8(truncatingIfNeeded: y * 255 / height + texture)
      row[x * 4 + 2] = UInt8(truncatingIfNeeded: (x + y) * 128 / (width + height) + shift * 2)
      row[x * 4 + 3] = 255
    }
  }

  private func write(_ bytes: [UInt8], to path: String) throws {
    guard let file = fopen(path, "wb") else { throw SlideshowError("cannot write \(path)") }
    defer { fclose(file) }
    guard bytes.withUnsafeBytes({ fwrite($0.baseAddress, 1, $0.count, file) }) == bytes.count else {
      throw SlideshowError("cannot write \(path)")
    }
  }
}

struct SlideshowError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Monotonic time for the progress lines.
enum Clock {
  static var now: UInt64 {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return UInt64(time.tv_sec) * 1_000_000_000 + UInt64(time.tv_nsec)
  }

  static func milliseconds(since start: UInt64) -> String { "\((now - start) / 1_000_000) ms" }
}
