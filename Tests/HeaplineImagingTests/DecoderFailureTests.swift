import Heapline
import HeaplineImaging
import Testing

extension ImagingTests {
  /// Bad and truncated files: a typed error, no crash, and nothing left allocated, as Heapline
  /// itself sees it.
  @Suite struct DecoderFailureTests {
    static func jpeg() throws -> [UInt8] {
      try JPEGEncoder().encode(TestImages.ramp(width: 120, height: 80, category: "source"))
    }

    static func png() throws -> [UInt8] {
      try PNGEncoder().encode(TestImages.ramp(width: 120, height: 80, category: "source"))
    }

    /// Decodes `data` inside a recording, expecting `check` to accept the error; then checks
    /// that neither the decoder's mallocs nor any image store outlived the call.
    static func expectCleanFailure(
      _ decode: @escaping () throws(ImagingError) -> PixelBuffer, mallocCategory: String,
      imageCategory: String, check: (ImagingError) -> Bool
    ) throws {
      var caught: ImagingError?
      let recording = try Heapline.record {
        do {
          _ = try decode()
        } catch {
          caught = error
        }
      }
      let error = try #require(caught)
      #expect(check(error), "unexpected error \(error)")
      let stats = recording.statistics
      #expect(stats.category(named: mallocCategory)?.persistentBytes ?? 0 == 0)
      #expect(stats.backingStores.category(named: imageCategory)?.persistentBytes ?? 0 == 0)
      #expect(TestImages.liveBackingBytes(imageCategory) == 0)
    }

    @Test(arguments: [0.5, 0.9])
    func aTruncatedJPEGThrowsAndLeavesNothing(keeping fraction: Double) throws {
      let data = try Self.jpeg()
      let cut = Array(data.prefix(Int(Double(data.count) * fraction)))
      let category = "DecoderFailureTests.jpeg.\(fraction)"
      try Self.expectCleanFailure(
        { () throws(ImagingError) in try JPEGDecoder(category: category).decode(cut) },
        mallocCategory: JPEGDecoder.mallocCategory, imageCategory: category
      ) { if case .truncated(format: "JPEG", _) = $0 { true } else { false } }
    }

    @Test func aJPEGCutInItsHeaderThrows() throws {
      let cut = Array(try Self.jpeg().prefix(40))
      try Self.expectCleanFailure(
        { () throws(ImagingError) in try JPEGDecoder().decode(cut) },
        mallocCategory: JPEGDecoder.mallocCategory, imageCategory: PixelBuffer.defaultCategory
      ) { if case .truncated = $0 { true } else { false } }
    }

    @Test(arguments: [[UInt8](), [0xFF, 0xD8, 0xFF, 0x00, 1, 2, 3], Array("not a jpeg".utf8)])
    func garbageIsNotAJPEG(data: [UInt8]) throws {
      try Self.expectCleanFailure(
        { () throws(ImagingError) in try JPEGDecoder().decode(data) },
        mallocCategory: JPEGDecoder.mallocCategory, imageCategory: PixelBuffer.defaultCategory
      ) { if case .corrupt(format: "JPEG", _) = $0 { true } else { false } }
    }

    @Test(arguments: [0.3, 0.95])
    func aTruncatedPNGThrowsAndLeavesNothing(keeping fraction: Double) throws {
      let data = try Self.png()
      let cut = Array(data.prefix(Int(Double(data.count) * fraction)))
      let category = "DecoderFailureTests.png.\(fraction)"
      try Self.expectCleanFailure(
        { () throws(ImagingError) in
          try PNGDecoder(maxSize: ImageSize(width: 60, height: 60), category: category).decode(cut)
        },
        mallocCategory: PNGDecoder.mallocCategory, imageCategory: category
      ) { if case .truncated(format: "PNG", _) = $0 { true } else { false } }
    }

    @Test func aPNGWithADamagedChunkIsCorrupt() throws {
      var data = try Self.png()
      data[data.count / 2] ^= 0xFF  // inside the image data: its CRC no longer matches
      try Self.expectCleanFailure(
        { () throws(ImagingError) in try PNGDecoder().decode(data) },
        mallocCategory: PNGDecoder.mallocCategory, imageCategory: PixelBuffer.defaultCategory
      ) { if case .corrupt(format: "PNG", _) = $0 { true } else { false } }
    }

    @Test func aMissingFileIsAnIOError() {
      #expect(throws: ImagingError.io(path: "/nonexistent/photo.jpg", errno: 2)) {
        try JPEGDecoder().decode(contentsOf: "/nonexistent/photo.jpg")
      }
    }
  }
}
