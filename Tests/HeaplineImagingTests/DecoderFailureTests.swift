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

    /// Decodes inside a recording, expecting `check` to accept the error; then checks that
    /// neither the decoder's mallocs nor any image store outlived the call. The error itself
    /// (its message was allocated by the decoder) is dropped inside the recording, and one
    /// decode before it fills the Swift runtime's one-time caches (type metadata), which
    /// would otherwise stay live under whichever category first needed them.
    static func expectCleanFailure(
      _ decode: @escaping () throws(ImagingError) -> PixelBuffer, mallocCategory: String,
      imageCategory: String, check: @escaping (ImagingError) -> Bool
    ) throws {
      _ = try? decode()
      var outcome = "no error"
      var matched = false
      let recording = try Heapline.record {
        do {
          _ = try decode()
        } catch let error as ImagingError {
          matched = check(error)
          outcome = "\(error)"
        }
      }
      #expect(matched, "unexpected outcome: \(outcome)")
      let stats = recording.statistics
      #expect(stats.category(named: mallocCategory)?.persistentBytes ?? 0 == 0)
      #expect(stats.category(named: mallocCategory)?.transientCount ?? 0 > 0)
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

    @Test(arguments: [
      [UInt8](), [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A], Array("not a jpeg".utf8),
    ])
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
