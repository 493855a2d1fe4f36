import Heapline
import HeaplineImaging

#if canImport(Glibc)
  import Glibc
#endif

/// The show itself: each photo in turn, forward and then back again (so a cache has something
/// to hit), with a line per photo that says what memory holds.
struct Slideshow {
  /// The backing-store category of the photos on screen or in a cache.
  static let category = "Slides"

  let mode: SlideshowMode
  let display: ImageSize
  let dwell: Double
  let simulateWarningBefore: Int?
  /// --leaky: every photo ever decoded, at full size, for good.
  private var keptForever: [String: PixelBuffer] = [:]
  /// --fixed: a bounded cache that answers memory warnings.
  private let cache: ImageCache<String>?
  /// The photo on screen.
  private var onScreen: PixelBuffer?

  init(
    mode: SlideshowMode, display: ImageSize, cacheLimit: Int, dwell: Double,
    simulateWarningBefore: Int?
  ) {
    self.mode = mode
    self.display = display
    self.dwell = dwell
    self.simulateWarningBefore = simulateWarningBefore
    cache = mode == .fixed ? ImageCache(name: "Slideshow cache", costLimit: cacheLimit) : nil
  }

  mutating func run(_ paths: [String]) throws {
    let order = Array(paths.indices) + paths.indices.reversed().dropFirst()
    print("slideshow --\(mode): \(order.count) shows of \(paths.count) photos")
    for (step, index) in order.enumerated() {
      if simulateWarningBefore == step + 1 {
        let freed = MemoryPressure.simulate(.warning)
        print("simulated memory warning: observers freed \(mib(freed))")
      }
      try show(paths[index], step: step + 1, of: order.count)
      pause(dwell)
    }
    onScreen = nil
    if let cache {
      let stats = cache.statistics
      print(
        "cache: \(stats.hits) hits, \(stats.misses) misses, \(stats.evictions) evictions, "
          + "\(stats.count) photos (\(mib(stats.totalCost))) left")
    }
    print("peak RSS \(mib(Self.statusBytes("VmHWM:")))")
  }

  private mutating func show(_ path: String, step: Int, of total: Int) throws {
    let started = Clock.now
    let image: PixelBuffer
    var how: String
    switch mode {
    case .leaky:
      if let kept = keptForever[path] {
        (image, how) = (kept, "kept")
      } else {
        image = try JPEGDecoder(category: Self.category).decode(contentsOf: path)
        keptForever[path] = image
        how = "decoded"
      }
    case .fixed:
      onScreen = nil  // the previous photo goes before the next one is decoded
      if let cached = cache?.image(forKey: path) {
        (image, how) = (cached, "cached")
      } else {
        image = try JPEGDecoder(maxSize: display, category: Self.category)
          .decode(contentsOf: path)
        cache?.setImage(image, forKey: path)
        how = "decoded"
      }
    }
    onScreen = image
    let backing = Heapline.backingStoreBytes(inCategory: Self.category).bytes
    print(
      "[\(step)/\(total)] \(path.split(separator: "/").last ?? ""): \(how) \(image.size) "
        + "in \(Clock.milliseconds(since: started)); slides \(mib(backing)), "
        + "RSS \(mib(Self.statusBytes("VmRSS:")))")
  }

  private func pause(_ seconds: Double) {
    guard seconds > 0 else { return }
    var left = timespec(
      tv_sec: Int(seconds), tv_nsec: Int((seconds - Double(Int(seconds))) * 1e9))
    var request = left
    while nanosleep(&request, &left) != 0 && errno == EINTR { request = left }
  }

  /// A line of /proc/self/status, in bytes (the file gives kB).
  static func statusBytes(_ field: String) -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return 0 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    while fgets(&line, Int32(line.count), file) != nil {
      let text = String(
        decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      guard text.hasPrefix(field) else { continue }
      let digits = text.dropFirst(field.count).filter(\.isNumber)
      return (Int(digits) ?? 0) * 1024
    }
    return 0
  }
}

/// `96.0 MiB`.
func mib(_ bytes: Int) -> String {
  let tenths = (bytes * 10 + (1 << 19)) >> 20
  return "\(tenths / 10).\(tenths % 10) MiB"
}
