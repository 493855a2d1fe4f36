import Foundation
import Heapline
import HeaplineAnalysis
import HeaplineTrace
import Testing

@testable import HeaplineImaging

extension ImagingTests {
  @Suite struct JPEGDecoderTests {
    /// A JPEG of the four quadrants, generated here.
    static func quadrantJPEG(width: Int, height: Int) throws -> [UInt8] {
      let image = try TestImages.quadrants(width: width, height: height, category: "source")
      return try JPEGEncoder(quality: 95).encode(image)
    }

    static func expectQuadrants(_ image: PixelBuffer) {
      let (w, h) = (image.width, image.height)
      for (x, y) in [
        (w / 4, h / 4), (3 * w / 4, h / 4), (w / 4, 3 * h / 4), (3 * w / 4, 3 * h / 4),
      ] {
        let expected = TestImages.quadrantColor(x: x, y: y, width: w, height: h)
        #expect(TestImages.close(image[x: x, y: y], expected), "pixel \(x),\(y)")
      }
    }

    @Test func aFullSizeDecodeReportsExactlyItsPixelsAndReleasesThem() throws {
      // Given a 96×64 JPEG
      let jpeg = try Self.quadrantJPEG(width: 96, height: 64)
      let category = "JPEGDecoderTests.full"
      // When it is decoded and dropped inside a recording
      let recording = try Heapline.record {
        let image = try JPEGDecoder(category: category).decode(jpeg)
        #expect(image.size == ImageSize(width: 96, height: 64))
        #expect(TestImages.liveBackingBytes(category) == 96 * 64 * 4)
        Self.expectQuadrants(image)
      }
      // Then exactly 96 × 64 × 4 bytes were reported, and all of them released
      let stores = try #require(recording.statistics.backingStores.category(named: category))
      #expect(stores.totalBytes == 24_576)
      #expect(stores.totalCount == 1)
      #expect(stores.persistentBytes == 0)
      #expect(TestImages.liveBackingBytes(category) == 0)
    }

    @Test func theDCTScalesByAnEighthWhenThatIsExactlyTheDisplaySize() throws {
      let jpeg = try Self.quadrantJPEG(width: 800, height: 600)
      let category = "JPEGDecoderTests.eighth"
      let recording = try Heapline.record {
        let image = try JPEGDecoder(maxSize: ImageSize(width: 100, height: 100), category: category)
          .decode(jpeg)
        #expect(image.size == ImageSize(width: 100, height: 75))
        Self.expectQuadrants(image)
      }
      let stores = try #require(recording.statistics.backingStores.category(named: category))
      #expect(stores.totalBytes == 100 * 75 * 4)
      #expect(stores.totalCount == 1)  // the full-size image never existed
    }

    @Test func theDCTScalesThenRowsAreResampledToTheExactSize() throws {
      let jpeg = try Self.quadrantJPEG(width: 800, height: 600)
      let category = "JPEGDecoderTests.resampled"
      let recording = try Heapline.record {
        let image = try JPEGDecoder(maxSize: ImageSize(width: 150, height: 150), category: category)
          .decode(jpeg)
        #expect(image.size == ImageSize(width: 150, height: 112))
        Self.expectQuadrants(image)
      }
      let stores = try #require(recording.statistics.backingStores.category(named: category))
      #expect(stores.totalBytes == 150 * 112 * 4)
      #expect(stores.peakBytes == 150 * 112 * 4)
      #expect(stores.persistentBytes == 0)
    }

    @Test func theScaleIsTheLargestThatKeepsTheTargetCovered() {
      let full = ImageSize(width: 6144, height: 4096)
      #expect(
        JPEGDecoder.scaleDenominator(full: full, target: ImageSize(width: 1620, height: 1080)) == 2)
      #expect(
        JPEGDecoder.scaleDenominator(full: full, target: ImageSize(width: 768, height: 512)) == 8)
      #expect(
        JPEGDecoder.scaleDenominator(full: full, target: ImageSize(width: 769, height: 512)) == 4)
      #expect(JPEGDecoder.scaleDenominator(full: full, target: full) == 1)
    }

    @Test func theDecodersTransientMallocsAreUnderItsCategoryWithStacksIntoLibjpeg() throws {
      // Given a recording kept on disk around one decode
      let jpeg = try Self.quadrantJPEG(width: 64, height: 64)
      let path = FileManager.default.temporaryDirectory
        .appendingPathComponent("jpeg-\(UUID().uuidString).trace").path
      defer { try? FileManager.default.removeItem(atPath: path) }
      var kept: PixelBuffer?
      let recording = try Heapline.record(to: path) {
        kept = try JPEGDecoder(category: "JPEGDecoderTests.stacks").decode(jpeg)
      }
      #expect(kept != nil)
      // Then the decoder's category holds transient blocks only, even while its image lives
      let mallocs = try #require(recording.statistics.category(named: JPEGDecoder.mallocCategory))
      #expect(mallocs.transientCount > 0)
      #expect(mallocs.persistentBytes == 0)
      // And every one of them has a stack, some of them through libjpeg itself
      var stream = try TraceReader(path: path).events()
      var stacks: [StackID] = []
      var categoryOf: [CategoryID] = []
      while let event = try stream.next() {
        if case .alloc(let alloc) = event {
          stacks.append(alloc.stack)
          categoryOf.append(alloc.category)
        }
      }
      let metadata = stream.metadata
      let decoderID = try #require(
        metadata.namedCategories.values.first { $0.name == JPEGDecoder.mallocCategory }?.id)
      let decoderStacks = zip(stacks, categoryOf).filter { $0.1 == decoderID }.map(\.0)
      #expect(decoderStacks.count == Int(mallocs.totalCount))
      #expect(decoderStacks.allSatisfy { !metadata.frames(of: $0).isEmpty })
      let throughLibjpeg = decoderStacks.contains { stack in
        metadata.frames(of: stack).contains {
          metadata.module(containing: $0)?.path.contains("libjpeg") ?? false
        }
      }
      #expect(throughLibjpeg)
    }
  }
}
