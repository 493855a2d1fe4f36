import Dispatch
import Heapline
import HeaplineImaging
import Synchronization
import Testing

extension ImagingTests {
  @Suite struct ImageCacheTests {
    /// A square image of side `side` (cost side² × 4).
    static func image(_ side: Int, _ category: String) throws -> PixelBuffer {
      try PixelBuffer(width: side, height: side, category: category)
    }

    @Test func theCostLimitHoldsAfterEveryInsertionAndTheOldestGoFirst() throws {
      let cache = ImageCache<Int>(costLimit: 10_000, purgesOnMemoryWarning: false)
      let sides = [10, 30, 20, 40, 5, 45, 25, 15, 35, 1]
      for (key, side) in sides.enumerated() {
        cache.setImage(try Self.image(side, "ImageCacheTests.limit"), forKey: key)
        #expect(cache.statistics.totalCost <= 10_000)
      }
      // Each eviction took the oldest: 45² × 4 = 8,100 pushed out 10, 30, 20 and 40 before it;
      // 25² × 4 = 2,500 then pushed out 5 and 45; 15, 35 and 1 fit beside it.
      for key in 6...9 { #expect(cache.image(forKey: key) != nil) }
      #expect(cache.image(forKey: 5) == nil)
      #expect(cache.statistics.totalCost == 2_500 + 900 + 4_900 + 4)
      #expect(cache.statistics.evictions == 6)
    }

    @Test func aLookUpMakesAnImageTheMostRecentlyUsed() throws {
      let cache = ImageCache<String>(costLimit: 3 * 400, purgesOnMemoryWarning: false)
      for key in ["a", "b", "c"] {
        cache.setImage(try Self.image(10, "ImageCacheTests.lru"), forKey: key)
      }
      _ = cache.image(forKey: "a")
      cache.setImage(try Self.image(10, "ImageCacheTests.lru"), forKey: "d")
      #expect(cache.image(forKey: "b") == nil)
      for key in ["a", "c", "d"] { #expect(cache.image(forKey: key) != nil) }
      let stats = cache.statistics
      #expect(stats.hits == 4)
      #expect(stats.misses == 1)
      #expect(stats.evictions == 1)
      #expect(stats.count == 3)
    }

    @Test func theCountLimitHoldsAndTooDearAnImageIsNotKept() throws {
      let cache = ImageCache<Int>(costLimit: 1_000, countLimit: 2, purgesOnMemoryWarning: false)
      for key in 0..<5 { cache.setImage(try Self.image(2, "ImageCacheTests.count"), forKey: key) }
      #expect(cache.statistics.count == 2)
      cache.setImage(try Self.image(20, "ImageCacheTests.count"), forKey: 99)  // 1,600 > 1,000
      #expect(cache.image(forKey: 99) == nil)
    }

    @Test func manyThreadsAtOnceKeepTheBooksStraight() throws {
      let cache = ImageCache<Int>(costLimit: 5 * 1_024, purgesOnMemoryWarning: false)
      let images = try (0..<16).map { _ in try Self.image(16, "ImageCacheTests.threads") }
      let lookUps = Mutex(0)
      let overLimit = Mutex(false)
      DispatchQueue.concurrentPerform(iterations: 4) { thread in
        var seed = UInt64(thread + 1)
        for _ in 0..<500 {
          seed = seed &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
          let key = Int(seed >> 60)
          if seed & 1 == 0 {
            cache.setImage(images[key], forKey: key)
          } else {
            _ = cache.image(forKey: key)
            lookUps.withLock { $0 += 1 }
          }
          if cache.statistics.totalCost > 5 * 1_024 { overLimit.withLock { $0 = true } }
        }
      }
      let stats = cache.statistics
      #expect(!overLimit.withLock { $0 })
      #expect(stats.hits + stats.misses == lookUps.withLock { $0 })
      #expect(stats.totalCost == stats.count * 1_024)
    }

    @Test func eachLevelFreesWhatItPromises() throws {
      // Given a cache of 8 images of 32×32 (4 KiB each), full, that only it references
      let name = "ImageCacheTests.levels"
      let category = "ImageCacheTests.levels.images"
      let cache = ImageCache<Int>(name: name, costLimit: 8 * 4_096)
      for key in 0..<8 { cache.setImage(try Self.image(32, category), forKey: key) }
      var left: [Int] = []
      // When a warning, an urgent and a critical warning are simulated
      let recording = try Heapline.record {
        for level in [MemoryPressure.Level.warning, .urgent, .critical] {
          MemoryPressure.simulate(level)
          left.append(TestImages.liveBackingBytes(category))
        }
      }
      // Then the cache kept half, a quarter, nothing of its limit
      let kept = [16_384, 8_192, 0]
      #expect(left == kept)
      // And it answered each warning with exactly the bytes it freed
      let answers: [UInt64] = recording.statistics.memoryWarnings.map { warning in
        warning.responses.first { $0.observer == name }?.freedBytes ?? 0
      }
      let promised: [UInt64] = [16_384, 8_192, 8_192]
      #expect(answers == promised)
      #expect(cache.statistics.count == 0)
    }

    @Test func imagesStillShownElsewhereLeaveTheCacheButFreeNothing() throws {
      let cache = ImageCache<Int>(costLimit: 2 * 4_096, purgesOnMemoryWarning: false)
      let shown = try Self.image(32, "ImageCacheTests.shown")
      cache.setImage(shown, forKey: 1)
      cache.setImage(try Self.image(32, "ImageCacheTests.shown"), forKey: 2)
      #expect(cache.purge(for: .critical) == 4_096)
      #expect(shown.byteCount == 4_096)
    }
  }
}
