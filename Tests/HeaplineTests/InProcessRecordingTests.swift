import CHeapline
import Heapline
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// A class whose instances are exactly 32 bytes: the 16-byte object header and two Ints.
final class Widget {
  var width = 1
  var height = 2
}

/// Keeps objects alive past the optimizer, without allocating.
@inline(never) func keep<T>(_ value: T) -> T { value }

// One recording runs at a time in a process, so these tests take turns.
@Suite(.serialized) struct InProcessRecordingTests {
  @Test func classInstancesAreCountedUnderTheirClassName() throws {
    // Given 1,000 Widgets made and kept, and 500 made and dropped, inside a recording
    var kept: [Widget] = []
    let recording = try Heapline.record {
      kept = (0..<1_000).map { _ in Widget() }
      for _ in 0..<500 { _ = keep(Widget()) }
    }
    // Then the Widget category holds exactly those objects, at 32 bytes each
    let widgets = try #require(recording.statistics.category(named: "HeaplineTests.Widget"))
    #expect(widgets.persistentCount == 1_000)
    #expect(widgets.persistentBytes == 32_000)
    #expect(widgets.transientCount == 500)
    #expect(widgets.totalCount == 1_500)
    #expect(widgets.totalBytes == 48_000)
    #expect(kept.count == 1_000)
  }

  @Test func aNamedScopeCountsBlocksAllocatedInsideIt() throws {
    // Given 300 blocks of 48 bytes made in a scope, 100 of them freed. Plain loops and a raw
    // buffer: unspecialized generic code in a debug build may allocate on its own.
    let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 300)
    defer { blocks.deallocate() }
    let recording = try Heapline.record {
      Heapline.category("Blocks") {
        var i = 0
        while i < 300 {
          blocks[i] = malloc(48)
          i += 1
        }
        i = 0
        while i < 100 {
          free(blocks[i])
          i += 1
        }
      }
    }
    defer { for i in 100..<300 { free(blocks[i]) } }
    // Then the scope's category has 200 persistent and 100 transient blocks
    let scope = try #require(recording.statistics.category(named: "Blocks"))
    #expect(scope.persistentCount == 200)
    #expect(scope.persistentBytes == 200 * 48)
    #expect(scope.transientCount == 100)
    #expect(scope.totalBytes == 300 * 48)
  }

  @Test func aScopeTokenThatNoPushReturnedIsIgnored() throws {
    // Given a stray number popped inside a scope of the C API (the thread's blocks went to a
    // category of that number, of no name and no kind a reader knew)
    let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 20)
    defer { blocks.deallocate() }
    let recording = try Heapline.record {
      let token = heapline_scope_push("Stray pop")
      heapline_scope_pop(12_345)
      var i = 0
      while i < 20 {
        blocks[i] = malloc(72)
        i += 1
      }
      heapline_scope_pop(token)
    }
    defer { for i in 0..<20 { free(blocks[i]) } }
    // Then the blocks are the scope's, and no category has a number for a name
    let scope = try #require(recording.statistics.category(named: "Stray pop"))
    #expect(scope.persistentCount == 20)
    #expect(scope.persistentBytes == 20 * 72)
    #expect(!recording.statistics.categories.contains { $0.name.hasPrefix("Category ") })
  }

  @Test func reallocChainsCallocAndAlignedAllocationsAreExact() throws {
    // Given: a realloc chain 100 → 200 → 400 → 50, a calloc of 10 × 24, three aligned blocks
    // of 1,000 bytes, and a valloc of 5,000 that is freed, all inside a scope
    var live: [UnsafeMutableRawPointer?] = []
    live.reserveCapacity(5)  // outside the scope: only the family's own blocks are in it
    let recording = try Heapline.record {
      Heapline.category("Family") {
        var p = malloc(100)
        p = realloc(p, 200)
        p = realloc(p, 400)
        p = realloc(p, 50)
        live.append(p)
        live.append(calloc(10, 24))
        live.append(aligned_alloc(64, 1_000))
        var second: UnsafeMutableRawPointer?
        _ = posix_memalign(&second, 128, 1_000)
        live.append(second)
        var aligned: UnsafeMutableRawPointer?
        _ = posix_memalign(&aligned, 256, 1_000)
        live.append(aligned)
        free(valloc(5_000))
      }
    }
    defer { for pointer in live { free(pointer) } }
    // Then 5 blocks of 50 + 240 + 3,000 bytes stay, of 9 allocations (realloc counts as one)
    let family = try #require(recording.statistics.category(named: "Family"))
    #expect(family.persistentCount == 5)
    #expect(family.persistentBytes == 50 + 240 + 3_000)
    #expect(family.totalCount == 9)
    let allocated: [UInt64] = [100, 200, 400, 50, 240, 3_000, 5_000]
    #expect(family.totalBytes == allocated.reduce(0, +))
  }

  @Test func aScopesLiveBytesAreZeroOnceNothingRecords() throws {
    // Given 5 blocks of 48 B kept in a scope while recording (in a plain buffer, made before:
    // an Array growing in the scope would count there too)
    let kept = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 5)
    defer {
      for i in 0..<5 { free(kept[i]) }
      kept.deallocate()
    }
    var whileRecording: (bytes: UInt64, blocks: UInt64) = (0, 0)
    _ = try Heapline.record {
      Heapline.category("KeptAfter") { for i in 0..<5 { kept[i] = malloc(48) } }
      whileRecording = Heapline.liveBytes(inCategory: "KeptAfter")
    }
    // Then the live table says so while recording, and nothing once the recording is over
    #expect(whileRecording.bytes == 5 * 48 && whileRecording.blocks == 5)
    let after = Heapline.liveBytes(inCategory: "KeptAfter")
    #expect(after.bytes == 0 && after.blocks == 0)
  }

  @Test func aBlockOfFourGibibytesOrMoreIsKeptExactlyBesideTheCompactBlocks() throws {
    // Given a block whose size needs more than the 32 bits of a compact slot (never touched,
    // so it costs address space only) and a small block, live together in a scope, then freed
    let huge = (1 << 32) + 3
    var whileLive: (bytes: UInt64, blocks: UInt64) = (0, 0)
    let recording = try Heapline.record {
      Heapline.category("Huge") {
        let big = malloc(huge)
        let small = malloc(40)
        whileLive = Heapline.liveBytes(inCategory: "Huge")
        free(big)
        free(small)
      }
    }
    // Then the live table gave both sizes exactly, and both frees found their blocks
    #expect(whileLive.bytes == UInt64(huge) + 40)
    #expect(whileLive.blocks == 2)
    let category = try #require(recording.statistics.category(named: "Huge"))
    #expect(category.totalCount == 2)
    #expect(category.totalBytes == UInt64(huge) + 40)
    #expect(category.persistentCount == 0)
  }

  /// 5,000 blocks of 64 bytes made in the scope "Churn", all but 250 freed.
  static func churnInScope() {
    Heapline.category("Churn") {
      // A plain buffer, not an Array: nothing but these blocks is allocated in the scope
      let kept = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 250)
      for i in 0..<5_000 {
        let block = malloc(64)
        if i < 4_750 { free(block) } else { kept[i - 4_750] = block }
      }
      kept.deallocate()
    }
  }

  @Test func fourThreadsAllocatingAtOnceLeaveTheKnownRemainder() throws {
    // The Swift runtime makes a type's metadata the first time the process uses it, with a
    // malloc in the scope that first uses it: done once beforehand, unrecorded, so that the
    // scope holds only its own blocks whichever test runs first.
    Self.churnInScope()
    // Given 4 threads, each making 5,000 blocks of 64 bytes in a scope and freeing all but 250
    let recording = try Heapline.record {
      var threads: [pthread_t] = []
      for _ in 0..<4 {
        var thread = pthread_t()
        pthread_create(
          &thread, nil,
          { _ in
            InProcessRecordingTests.churnInScope()
            return nil
          }, nil)
        threads.append(thread)
      }
      for thread in threads { pthread_join(thread, nil) }
    }
    // Then exactly 4 × 250 blocks of 64 bytes are live at the end (the buffers that held them
    // are freed, and counted as transient)
    let churn = try #require(recording.statistics.category(named: "Churn"))
    #expect(churn.persistentCount == 1_000)
    #expect(churn.persistentBytes == 64_000)
    #expect(churn.totalCount == 4 * 5_000 + 4)
  }

  @Test func asecondRecordingWhileOneRunsIsRefused() throws {
    _ = try Heapline.record {
      #expect(throws: HeaplineError.self) { _ = try Heapline.record {} }
    }
  }
}
