import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// The slideshow demo, recorded with small photos (640×480; the README's run uses 6144×4096).
@Suite(.serialized) struct SlideshowEndToEndTests {
  static let photo: UInt64 = 640 * 480 * 4
  static let shown: UInt64 = 320 * 240 * 4

  /// Records `slideshow MODE` over three photos kept in one directory for the suite.
  func record(_ arguments: [String]) throws -> (Harness.Result, Statistics, String) {
    let slideshow = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("slideshow").path
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("slideshow.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", slideshow] + arguments + [
        "--size", "640x480", "--display", "320x240", "--count", "3", "--dwell", "0",
        "--images", dir.appendingPathComponent("photos").path,
      ])
    #expect(result.status == 0, "\(result.stderr)")
    return (result, try Statistics(reader: TraceReader(path: trace)), trace)
  }

  @Test func theLeakyModeKeepsEveryFullSizePhotoOutsideMalloc() throws {
    let (result, stats, trace) = try record(["--leaky", "--simulate-warning-before", "4"])
    #expect(result.stdout.contains("[3/5] slide-2.jpg: decoded 640×480"))
    // The photos' pixels grew to three full-size images, while malloc stayed small
    let slides = try #require(stats.backingStores.category(named: "Slides"))
    #expect(slides.totalCount == 3)
    #expect(slides.peakBytes == 3 * Self.photo)
    #expect(stats.totals.peakLiveBytes < slides.peakBytes / 4)
    // And nobody answered the warning
    #expect(stats.memoryWarnings.count == 1)
    #expect(stats.memoryWarnings[0].freedBytes == 0)
    // And the timeline's backing-store columns rise step by step to three photos, and fall
    // only when the show is over
    let table = try CSVTable(Harness.heapline(["timeline", trace, "--interval", "1"]).stdout)
    let backing = try table.integers("backing_bytes:Slides")
    #expect(try table.integers("backing_store_bytes") == backing)
    let top = try #require(backing.firstIndex(of: Int(3 * Self.photo)))
    #expect(Array(backing[...top]) == backing[...top].sorted())
    let marker = try table.column("marker")
    let warned = try #require(table.rows.firstIndex { $0[marker] == "memory warning: warning" })
    #expect(warned > top && backing[warned] == Int(3 * Self.photo))
  }

  @Test func theFixedModeDecodesAtDisplaySizeAndAnswersTheWarning() throws {
    // Given a cache of 1,000,000 bytes (three 320×240 photos fit) and a warning before the
    // fourth show, when photo 3 is on screen and photos 1 and 2 only in the cache
    let (result, stats, trace) = try record([
      "--fixed", "--cache-limit", "1000000", "--simulate-warning-before", "4",
    ])
    #expect(result.stdout.contains("[1/5] slide-0.jpg: decoded 320×240"))
    // Then the cache trimmed itself to half its limit: photos 1 and 2 went, freeing two
    let warning = try #require(stats.memoryWarnings.first)
    #expect(warning.responses.map(\.observer) == ["Slideshow cache"])
    #expect(warning.freedBytes == 2 * Self.shown)
    let slides = try #require(stats.backingStores.category(named: "Slides"))
    #expect(slides.peakBytes == 3 * Self.shown)
    #expect(result.stdout.contains("simulated memory warning: observers freed 0.6 MiB"))
    // And the timeline shows the drop at the warning's marker: in steps of 10 µs, the first
    // change after it is the purge, before the next photo is decoded
    let table = try CSVTable(Harness.heapline(["timeline", trace, "--interval", "0.01"]).stdout)
    let backing = try table.integers("backing_bytes:Slides")
    let marker = try table.column("marker")
    let row = try #require(table.rows.firstIndex { $0[marker] == "memory warning: warning" })
    #expect(backing[row - 1] == Int(3 * Self.shown))
    let next = try #require(backing[row...].first { $0 != backing[row - 1] })
    #expect(next < backing[row - 1])
  }
}
