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
      // 35² × 4 + 1² × 4 = 4,904; adding 15² × 4 = 900 keeps it under; 25² × 4 does not fit
      #expect(cache.image(forKey: 9) != nil)
      #expect(cache.image(forKey: 8) != nil)
      #expect(cache.image(forKey: 7) != nil)
      #expect(cache.image(forKey: 6) == nil)
      #expect(cache.statistics.totalCost == 4_904 + 900)
    }

    @Test func aLookUpMakesAnImageTheMostRecentlyUsed() throws {
      let cache = ImageCache<String>(costLimit: 3 * 400, purgesOnMemoryWarning: false)
      for key in ["a", "b", "c"] { cache.setImage(try Self.image(10, "ImageCacheTests.lru"), forKey: key) }
      _ = cache.image(forKey: "a")
      cache.setImage(try Self.image(10, "ImageCacheTests.lru"), forKey: "d")
      #expect(cache.image(forKey: "b") == nil)
      for key in ["a", "c", "d"] { #expect(cache.image(forKey: key) != nil) }
      let stats = cache.statistics
      #expect((stats.hits, stats.misses, stats.evictions, stats.count) == (4, 1, 1, 3))
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
      var freed: [Int] = []
      // When a warning, an urgent and a critical warning are simulated
      let recording = try Heapline.record {
        for level in [MemoryPressure.Level.warning, .urgent, .critical] {
          MemoryPressure.simulate(level)
          freed.append(TestImages.liveBackingBytes(category))
        }
      }
      // Then the cache kept half, a quarter, nothing of its limit
      #expect(freed == [4 * 4_096, 2 * 4_096, 0])
      // And it answered each warning with exactly the bytes it freed
      let answers = recording.statistics.memoryWarnings.map { warning in
        warning.responses.first { $0.observer == name }?.freedBytes
      }
      #expect(answers == [4 * 4_096, 2 * 4_096, 2 * 4_096])
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
