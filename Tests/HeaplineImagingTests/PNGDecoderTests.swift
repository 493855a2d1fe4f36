import Heapline
import HeaplineImaging
import Testing

extension ImagingTests {
  @Suite struct PNGDecoderTests {
    /// The expected pixel of a 2×2 box mean of `image` at target (x, y), rounded half up.
    static func boxMean(_ image: PixelBuffer, x: Int, y: Int) -> RGBA {
      var sums = [0, 0, 0, 0]
      for (dx, dy) in [(0, 0), (1, 0), (0, 1), (1, 1)] {
        let p = image[x: 2 * x + dx, y: 2 * y + dy]
        for (index, value) in [p.red, p.green, p.blue, p.alpha].enumerated() {
          sums[index] += Int(value)
        }
      }
      let mean = sums.map { UInt8(($0 + 2) / 4) }
      return RGBA(red: mean[0], green: mean[1], blue: mean[2], alpha: mean[3])
    }

    @Test(arguments: [false, true])
    func aFullSizeDecodeIsExact(interlaced: Bool) throws {
      let source = try TestImages.ramp(width: 50, height: 40, category: "source")
      let png = try PNGEncoder(interlaced: interlaced).encode(source)
      let category = "PNGDecoderTests.full.\(interlaced)"
      let recording = try Heapline.record {
        let image = try PNGDecoder(category: category).decode(png)
        #expect(image.size == source.size)
        var differing = 0
        for y in 0..<40 {
          for x in 0..<50 where image[x: x, y: y] != source[x: x, y: y] { differing += 1 }
        }
        #expect(differing == 0)
      }
      let stores = try #require(recording.statistics.backingStores.category(named: category))
      #expect(stores.totalBytes == 50 * 40 * 4)
      #expect(stores.persistentBytes == 0)
    }

    @Test func rowsAreShrunkAsTheyComeAndTheFullImageIsNeverHeld() throws {
      // Given a 40×30 PNG decoded to fit 20×20: 20×15, each pixel the mean of a 2×2 block
      let source = try TestImages.ramp(width: 40, height: 30, category: "source")
      let png = try PNGEncoder().encode(source)
      let category = "PNGDecoderTests.streamed"
      let recording = try Heapline.record {
        let image = try PNGDecoder(maxSize: ImageSize(width: 20, height: 20), category: category)
          .decode(png)
        #expect(image.size == ImageSize(width: 20, height: 15))
        var differing = 0
        for y in 0..<15 {
          for x in 0..<20 where image[x: x, y: y] != Self.boxMean(source, x: x, y: y) {
            differing += 1
          }
        }
        #expect(differing == 0)
      }
      // Then the only backing store was the 20×15 output
      let stores = recording.statistics.backingStores
      #expect(stores.category(named: category)?.totalBytes == 20 * 15 * 4)
      #expect(stores.category(named: PNGDecoder.interlacedCategory) == nil)
      #expect(recording.statistics.category(named: PNGDecoder.mallocCategory)?.persistentBytes == 0)
    }

    @Test func anInterlacedImageIsShrunkFromATemporaryFullSizeBuffer() throws {
      let source = try TestImages.ramp(width: 40, height: 30, category: "source")
      let png = try PNGEncoder(interlaced: true).encode(source)
      let category = "PNGDecoderTests.interlaced"
      let recording = try Heapline.record {
        let image = try PNGDecoder(maxSize: ImageSize(width: 20, height: 20), category: category)
          .decode(png)
        #expect(image[x: 7, y: 11] == Self.boxMean(source, x: 7, y: 11))
      }
      let whole = try #require(
        recording.statistics.backingStores.category(named: PNGDecoder.interlacedCategory))
      #expect(whole.totalBytes == 40 * 30 * 4)
      #expect(whole.persistentBytes == 0)
    }
  }
}
