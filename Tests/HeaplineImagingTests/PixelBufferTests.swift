import Heapline
import HeaplineImaging
import Testing

extension ImagingTests {
  @Suite struct PixelBufferTests {
    @Test func aBufferIsABackingStoreOfExactlyItsPixelsForItsWholeLife() throws {
      let category = "PixelBufferTests.life"
      // Given a 333×77 buffer (not a whole number of pages)
      var image: PixelBuffer? = try PixelBuffer(width: 333, height: 77, category: category)
      // Then exactly 333 × 77 × 4 bytes are reported while it lives
      #expect(image?.byteCount == 102_564)
      #expect(TestImages.liveBackingBytes(category) == 102_564)
      #expect(Heapline.backingStoreBytes(inCategory: category).stores == 1)
      // And its pixels start transparent and can be written
      #expect(image?[x: 332, y: 76] == RGBA(red: 0, green: 0, blue: 0, alpha: 0))
      image?[x: 332, y: 76] = RGBA(red: 1, green: 2, blue: 3)
      #expect(image?[x: 332, y: 76] == RGBA(red: 1, green: 2, blue: 3))
      // When it is released, nothing is reported any more
      image = nil
      #expect(TestImages.liveBackingBytes(category) == 0)
    }

    @Test func theRecordingSeesTheStoreMadeAndReleased() throws {
      let category = "PixelBufferTests.recorded"
      let recording = try Heapline.record {
        let image = try PixelBuffer(width: 64, height: 32, category: category)
        image.fill(RGBA(red: 9, green: 9, blue: 9))
      }
      let stores = try #require(recording.statistics.backingStores.category(named: category))
      #expect(stores.totalBytes == 64 * 32 * 4)
      #expect(stores.totalCount == 1)
      #expect(stores.persistentBytes == 0)
    }

    @Test func emptyAndAbsurdSizesThrow() {
      #expect(throws: ImagingError.invalidSize(width: 0, height: 10)) {
        try PixelBuffer(width: 0, height: 10)
      }
      #expect(throws: ImagingError.invalidSize(width: 100_000, height: 100_000)) {
        try PixelBuffer(width: 100_000, height: 100_000)
      }
    }

    @Test func sizesFitWithinBoundsKeepingTheirAspect() {
      let photo = ImageSize(width: 6144, height: 4096)
      let display = photo.fitting(within: ImageSize(width: 1920, height: 1080))
      #expect(display == ImageSize(width: 1620, height: 1080))
      let narrow = photo.fitting(within: ImageSize(width: 600, height: 4000))
      #expect(narrow == ImageSize(width: 600, height: 400))
      #expect(photo.fitting(within: ImageSize(width: 8000, height: 8000)) == photo)
      let line = ImageSize(width: 1000, height: 1).fitting(within: ImageSize(width: 10, height: 10))
      #expect(line == ImageSize(width: 10, height: 1))
    }
  }
}
