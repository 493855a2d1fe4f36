import Heapline
import HeaplineAnalysis
import Testing

#if canImport(Glibc)
  import Glibc
#endif

// In the serialized suite: one recording runs at a time in a process.
extension InProcessRecordingTests {
  @Test func theGrowthBetweenTwoMarksIsUnder64KiB() throws {
    // Given 200 blocks of 100 bytes made in a scope between marks A and B, 50 freed at once,
    // and 50 more freed after B. Plain loops and a raw buffer: nothing else allocates there.
    let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 200)
    defer { blocks.deallocate() }
    let recording = try Heapline.record {
      Heapline.mark("A")
      Heapline.category("Cache") {
        var i = 0
        while i < 200 {
          blocks[i] = malloc(100)
          i += 1
        }
        i = 0
        while i < 50 {
          free(blocks[i])
          i += 1
        }
      }
      Heapline.mark("B")
      usleep(5_000)  // so that a 1 ms step holds nothing from both sides of B
      var i = 50
      while i < 100 {
        free(blocks[i])
        i += 1
      }
      Heapline.mark("after slideshow")
    }
    defer { for i in 100..<200 { free(blocks[i]) } }
    // Then the growth from A to B is the 150 blocks kept, well under 64 KiB
    // (by category: other suites run meanwhile, and a recording sees the whole process)
    let growth = try recording.growth(from: "A", to: "B")
    let cache = try #require(growth.category(named: "Cache"))
    #expect(cache.bytes < 64 * 1024)
    #expect((cache.count, cache.bytes) == (150, 15_000))
    // And the generations show the marks in order; of A's blocks, 100 outlived the recording
    let generations = try recording.generations
    #expect(generations.map(\.name) == ["start", "A", "B", "after slideshow"])
    #expect(generations[1].category(named: "Cache")?.count == 100)
    #expect(generations[1].allocatedBytes >= 20_000)
    // And from B to the end, nothing of the cache was added
    #expect(try recording.growth(from: "B", to: "end").category(named: "Cache") == nil)
  }

  @Test func theTimelineOfARecordingAgreesWithItsStatistics() throws {
    let blocks = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 100)
    defer { blocks.deallocate() }
    let recording = try Heapline.record {
      Heapline.category("Cache") {
        var i = 0
        while i < 100 {
          blocks[i] = malloc(1_000)
          i += 1
        }
      }
      Heapline.mark("full")
      usleep(5_000)
      var i = 0
      while i < 100 {
        free(blocks[i])
        i += 1
      }
    }
    let timeline = try recording.timeline(interval: .milliseconds(1))
    let totals = recording.statistics.totals
    #expect(timeline.rows.last?.liveBytes == totals.liveBytes)
    #expect(timeline.rows.map(\.liveBytes).max() == totals.peakLiveBytes)
    let full = try #require(timeline.row(withMark: "full"))
    #expect(timeline.liveBytes(of: "Cache", in: full) == 100_000)
    #expect(timeline.rows.last.flatMap { timeline.liveBytes(of: "Cache", in: $0) } == 0)
  }

  @Test func anUnknownMarkIsAnError() throws {
    let recording = try Heapline.record { Heapline.mark("only") }
    #expect(throws: AnalysisError.self) { try recording.growth(from: "only", to: "missing") }
  }
}
