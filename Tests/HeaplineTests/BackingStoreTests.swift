import Heapline
import HeaplineAnalysis
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Memory reported through `Heapline.backingStore`, in process.
@Suite struct BackingStoreTests {
  /// A mapping of `bytes`, touched so that it is resident.
  static func map(_ bytes: Int) -> UnsafeMutableRawPointer {
    let pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
    memset(pointer, 1, bytes)
    return pointer
  }

  @Test func reportedStoresAreCountedLiveAndInTheRecording() throws {
    // Given three stores reported under a category of this test's own, one released
    let category = "BackingStoreTests.reported"
    let sizes = [1 << 20, 3 << 20, 65_536]
    var pointers: [UnsafeMutableRawPointer] = []
    pointers.reserveCapacity(sizes.count)
    let recording = try Heapline.record {
      for size in sizes {
        let pointer = Self.map(size)
        Heapline.backingStore(
          allocated: size, category: category, id: UInt64(UInt(bitPattern: pointer)))
        pointers.append(pointer)
      }
      let released = Heapline.backingStore(released: UInt64(UInt(bitPattern: pointers[0])))
      #expect(released == 1 << 20)
      munmap(pointers[0], sizes[0])
    }
    // Then the shim counts the two that are live
    let live = Heapline.backingStoreBytes(inCategory: category)
    #expect(live.bytes == (3 << 20) + 65_536)
    #expect(live.stores == 2)
    // And the recording has every one, per category, with its peak
    let stores = try #require(recording.statistics.backingStores.category(named: category))
    #expect(stores.totalBytes == UInt64(sizes.reduce(0, +)))
    #expect(stores.totalCount == 3)
    #expect(stores.persistentBytes == (3 << 20) + 65_536)
    #expect(stores.transientCount == 1)
    #expect(stores.peakBytes == UInt64(sizes.reduce(0, +)))
    // And the footprint at the end counts them beside malloc's blocks
    #expect(recording.statistics.footprint.isMeasured)
    #expect(recording.statistics.footprint.backingStoreBytes >= (3 << 20) + 65_536)
    for (pointer, size) in zip(pointers, sizes).dropFirst() {
      Heapline.backingStore(released: UInt64(UInt(bitPattern: pointer)))
      munmap(pointer, size)
    }
    #expect(Heapline.backingStoreBytes(inCategory: category).bytes == 0)
  }

  @Test func theFootprintsMallocFiguresAgreeWithTheTrace() throws {
    // Given 100 blocks of 1,001 bytes made and kept in a recording
    let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 100)
    defer { blocks.deallocate() }
    let recording = try Heapline.record {
      var i = 0
      while i < 100 {
        blocks[i] = malloc(1_001)
        i += 1
      }
    }
    defer { for i in 0..<100 { free(blocks[i]) } }
    // Then the shim's live table, summed just before the recording stopped, holds them (and
    // whatever tests running beside this one had live then), and malloc rounds each block up:
    // glibc gives 1,001 bytes a 1,024-byte chunk, 1,016 of them usable
    let footprint = recording.statistics.footprint
    #expect(footprint.isMeasured)
    #expect(footprint.mallocLiveBytes >= 100 * 1_001)
    #expect(footprint.mallocLiveBlocks >= 100)
    #expect(footprint.mallocOverheadBytes ?? 0 >= 100 * 15)
    #expect((footprint.residentBytes ?? 0) > footprint.mallocLiveBytes)
  }

  @Test func anUnknownReleaseChangesNothing() {
    #expect(Heapline.backingStore(released: 0xDEAD_0000) == 0)
  }

  @Test func storesThatAddUpPastIntMaxReadAsIntMax() {
    // Given two stores of 2^62 bytes each, and one of a negative size, for a moment (their sum
    // was converted to Int, which trapped: the program crashed reading it)
    let category = "BackingStoreTests.huge"
    Heapline.backingStore(allocated: 1 << 62, category: category, id: 0xBEEF_0001)
    Heapline.backingStore(allocated: 1 << 62, category: category, id: 0xBEEF_0002)
    Heapline.backingStore(allocated: -5, category: category, id: 0xBEEF_0003)
    let both = Heapline.backingStoreBytes(inCategory: category)
    let released = [0xBEEF_0001, 0xBEEF_0002, 0xBEEF_0003].map {
      Heapline.backingStore(released: $0)
    }
    // Then they read as Int.max bytes in 3 stores, the negative one as 0 bytes
    #expect(both.bytes == Int.max)
    #expect(both.stores == 3)
    #expect(released == [1 << 62, 1 << 62, 0])
  }
}
