import ArgumentParser
import Heapline
import HeaplineImaging

/// `slideshow`: shows large photos one after another, the wrong way (`--leaky`) or the right
/// way (`--fixed`), so that `heapline record` can show the difference. Run it under
/// `heapline record --warn-at 2 -- slideshow --leaky`, then `heapline report` and
/// `heapline timeline`.
@main
struct SlideshowCommand: ParsableCommand {
  static let configuration = CommandConfiguration(
    commandName: "slideshow",
    abstract: "Show large JPEG photos one after another, leaking or not.",
    discussion: """
      --leaky decodes every photo at full size (6144×4096 is 96 MiB of pixels) and keeps them \
      all, with no cache limit and no answer to memory warnings. --fixed decodes at display \
      size, releases the previous photo, caches with a cost limit, and purges the cache on \
      memory warnings. The photos are generated once into a temporary directory.
      """)

  @Flag(help: "How to show the photos (one is needed, unless --generate-only).")
  var mode: SlideshowMode?

  @Option(help: "The number of photos.")
  var count = 6

  @Option(help: ArgumentHelp("The photos' size.", valueName: "WxH"))
  var size = "6144x4096"

  @Option(help: ArgumentHelp("The display's size (--fixed decodes to fit it).", valueName: "WxH"))
  var display = "1920x1080"

  @Option(help: "Seconds each photo stays on screen.")
  var dwell = 0.25

  @Option(
    help: ArgumentHelp("The image cache's cost limit in bytes (--fixed).", valueName: "bytes"))
  var cacheLimit = 32 << 20

  @Option(
    help: ArgumentHelp(
      "Simulate a memory warning before showing photo N (counting from 1).",
      valueName: "N"))
  var simulateWarningBefore: Int?

  @Option(help: "Where the generated photos are kept (default: a directory under $TMPDIR).")
  var images: String?

  @Flag(help: "Generate the photos and stop.")
  var generateOnly = false

  mutating func validate() throws {
    guard count > 0 else { throw ValidationError("--count must be at least 1") }
    guard mode != nil || generateOnly else {
      throw ValidationError("choose --leaky or --fixed (or --generate-only)")
    }
    _ = try Self.parseSize(size, option: "--size")
    _ = try Self.parseSize(display, option: "--display")
    guard dwell >= 0 else { throw ValidationError("--dwell must be 0 or more") }
  }

  func run() throws {
    let photoSize = try Self.parseSize(size, option: "--size")
    let generator = SlideGenerator(
      size: photoSize, count: count,
      directory: images ?? SlideGenerator.defaultDirectory(for: photoSize))
    _ = try generator.prepare()
    guard let mode, !generateOnly else { return }
    let paths = (0..<count).map(generator.path(ofSlide:))
    var show = Slideshow(
      mode: mode, display: try Self.parseSize(display, option: "--display"),
      cacheLimit: cacheLimit, dwell: dwell, simulateWarningBefore: simulateWarningBefore)
    try show.run(paths)
  }

  static func parseSize(_ text: String, option: String) throws -> ImageSize {
    let parts = text.lowercased().split(separator: "x").compactMap { Int($0) }
    guard parts.count == 2, parts[0] > 0, parts[1] > 0 else {
      throw ValidationError("\(option) takes WIDTHxHEIGHT, not '\(text)'")
    }
    return ImageSize(width: parts[0], height: parts[1])
  }
}

/// The two ways to show photos.
enum SlideshowMode: String, EnumerableFlag {
  /// Full-size decodes, all kept, no limit, deaf to warnings.
  case leaky
  /// Display-size decodes, the previous photo released, a bounded cache that purges on
  /// warnings.
  case fixed
}
