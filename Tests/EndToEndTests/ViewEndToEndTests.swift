import Foundation
import HeaplineAnalysis
import Testing

/// `heapline view`: the page of a recorded fixture, rendered in headless Chromium, shows the
/// fixture's exact figures; instants and ranges opened by link show what `report --at` and
/// generations give; a long trace's page stays small; bad input fails as `report` fails.
@Suite("heapline view in a real browser")
struct ViewEndToEndTests {
  static func grouped(_ value: Int) -> String {
    let digits = Array(String(value))
    var text = ""
    for (index, digit) in digits.enumerated() {
      if index > 0 && (digits.count - index) % 3 == 0 { text.append(",") }
      text.append(digit)
    }
    return text
  }

  static func reportTotals(_ trace: String) throws -> [String: Any] {
    let result = try Harness.heapline(["report", trace, "--format", "json", "--no-symbolize"])
    let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8))
    return try #require((object as? [String: Any])?["totals"] as? [String: Any])
  }

  @Test func aLeakedCycleIsDrawnAlongItsPathNotThroughEveryBlockInIt() throws {
    // Given a Holder whose array holds two Parts that each hold the Holder back, all dropped:
    // the page drew every block of the cycle in a row, "… → Part → Part → Holder", a pointer
    // from one Part to the other that is not there
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.swiftFixture("cyclechain", ["-Onone"], in: dir)
    let trace = dir.appendingPathComponent("cycle.trace").path
    let record = try Harness.heapline(["record", "-o", trace, "--", program])
    try #require(record.status == 0, "\(record.stderr)")
    let page = dir.appendingPathComponent("cycle.html").path
    #expect(try Harness.heapline(["view", trace, "-o", page]).status == 0)
    // Then the page draws the cycle's path, as the leak report names it
    let dom = try ChromiumPage.dom(page, fragment: "leaks")
    let nodes = ["Holder", "_ContiguousArrayStorage&lt;Swift.AnyObject&gt;", "Part", "Holder"]
    let chain = nodes.map { "<span class=\"node\">\($0)</span>" }
      .joined(separator: "<span class=\"arrow\">\u{2192}</span>")
    #expect(dom.contains("<div class=\"chain\">\(chain)</div>"), "\(dom.prefix(4000))")
  }

  @Test func thePageOfTheBlocksFixtureShowsItsExactPeakLiveBytesAndTopFunction() throws {
    // Given `blocks 1000 1000 400`: 1,000 blocks of 1,000 B from make_blocks (and its calloc
    // of 1,000 pointers), the first 400 freed
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace").path
    let record = try Harness.heapline(
      ["record", "-o", trace, "--", program, "1000", "1000", "400", "0"], stdin: "hi\n")
    try #require(record.status == 0, "\(record.stderr)")
    // When its page is written and rendered
    let page = dir.appendingPathComponent("blocks.html").path
    let view = try Harness.heapline(["view", trace, "-o", page])
    #expect(view.status == 0, "\(view.stderr)")
    #expect(view.stderr == "heapline: wrote \(page)\n")
    let dom = try ChromiumPage.dom(page)
    // Then the peak is the fixture's: its blocks and its pointer array, all live at once
    let totals = try Self.reportTotals(trace)
    let peak = 1_000 * 1_000 + 1_000 * 8
    #expect(totals["peak_live_bytes"] as? Int == peak)
    let peakText = try #require(ChromiumPage.text(ofID: "peak-live-bytes", in: dom))
    #expect(peakText.hasPrefix(Self.grouped(peak) + " B ("), "\(peakText)")
    // And live at the end is the report's, byte for byte
    let live = try #require(totals["live_bytes"] as? Int)
    let liveText = try #require(ChromiumPage.text(ofID: "live-at-end", in: dom))
    #expect(liveText.hasPrefix(Self.grouped(live) + " B ("), "\(liveText)")
    // And the top function at the peak is make_blocks, with its 1,000 blocks of 1,000 B
    #expect(ChromiumPage.text(ofID: "top-function", in: dom) == "make_blocks")
    let topBytes = ChromiumPage.text(ofID: "top-function-bytes", in: dom) ?? ""
    #expect(topBytes.hasPrefix("1,000,000 B ("), "\(topBytes)")
    // And the categories table holds the blocks' size class with Object Alloc's columns
    let rows = ChromiumPage.table(ofID: "categories", in: dom)
    let blocks = rows.first { $0.first == "Malloc 1008 Bytes" }
    #expect(
      blocks == [
        "Malloc 1008 Bytes", "600,000", "600", "400", "1,000,000", "1,000",
        "1,000,000",
      ])
    // And the call tree's weights of the malloc in make_blocks are exact: 1,000 blocks at the
    // peak, none temporary, and the 600 never freed lost with the pointer array (the leak
    // scan at exit)
    let text = try String(contentsOfFile: page, encoding: .utf8)
    let data = try #require(HTMLPage.embeddedData(of: text))
    let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
    let embedded = try #require(object?["page"] as? [String: Any])
    let frames = try #require(embedded["frames"] as? [[String]])
    let stacks = try #require(embedded["stacks"] as? [[String: Any]])
    let mallocs = stacks.filter { stack in
      (stack["frames"] as? [Int] ?? []).contains { index in
        frames[index][0] == "make_blocks" && frames[index][2].hasSuffix("blocks.c:9")
      }
    }
    #expect(mallocs.map { $0["weights"] as? [Int] } == [[1_000_000, 1_000_000, 1_000, 0, 600_000]])
    // And the flame graph by leaked bytes, filtered to make_blocks, is the one path from the
    // process's start down to make_blocks, whose two allocations (its 600 blocks never freed
    // and the pointer array that held them) the leak scan found lost: 608,000 B
    let flame = try ChromiumPage.dom(page, fragment: "tree=flame&weight=4&filter=make_blocks")
    let svg = try #require(flame.components(separatedBy: "id=\"flame-svg\"").last)
    let titles = svg.components(separatedBy: "<title>").dropFirst().map {
      $0.components(separatedBy: "</title>")[0]
    }
    #expect(titles.first == "all stacks\n608,000 B (593.75 KiB)", "\(titles)")
    #expect(titles.last == "make_blocks  (blocks)\n608,000 B (593.75 KiB)", "\(titles)")
    #expect(titles.allSatisfy { $0.hasSuffix("\n608,000 B (593.75 KiB)") }, "\(titles)")
    // And the screenshot is the window's size, and not blank
    let png = dir.appendingPathComponent("blocks.png").path
    try ChromiumPage.screenshot(page, to: png, width: 1000, height: 1400)
    let shot = try ChromiumPage.inkedPixels(png)
    #expect((shot.width, shot.height) == (1000, 1400))
    #expect(shot.inked * 20 > shot.width * shot.height, "inked pixels: \(shot.inked)")
  }

  @Test func linksToAnInstantAndARangeShowTheStateAtAMarkAndTheGenerationBetweenTwo() throws {
    // Given the phases fixture, whose scopes hold known bytes at each mark, and its page
    let recording = try PhasesFixture.phases.get()
    let marks = Dictionary(
      try PhasesFixture.marks(recording.trace), uniquingKeysWith: { a, _ in a })
    let page = recording.directory.appendingPathComponent("phases.html").path
    let view = try Harness.heapline(["view", recording.trace, "-o", page, "--no-symbolize"])
    try #require(view.status == 0, "\(view.stderr)")
    let seconds = { (name: String) in String(Double(marks[name]!) / 1e9) }
    // When it is opened at mark C (the spike freed, 120,000 B of Steps live)
    let atC = try ChromiumPage.dom(page, fragment: "at=" + seconds("C"))
    // Then the categories are those of `report --at` there
    let rows = ChromiumPage.table(ofID: "categories", in: atC)
    #expect(rows.first { $0.first == "Steps" } == ["Steps", "120,000", "30", "0", "120,000", "30"])
    #expect(rows.first { $0.first == "Spike" } == ["Spike", "0", "0", "100", "1,000,000", "100"])
    #expect(!rows.contains { $0.first == "Growth" })
    // And opened on the range from C to D, it shows the 50 blocks of Growth made in between
    let range = try ChromiumPage.dom(page, fragment: "from=\(seconds("C"))&to=\(seconds("D"))")
    let generation = ChromiumPage.table(ofID: "categories", in: range)
    #expect(generation.first { $0.first == "Growth" } == ["Growth", "50,000", "50"])
    #expect(!generation.contains { $0.first == "Steps" || $0.first == "Spike" })
  }

  @Test func thePageOfATwoMillionEventTraceStaysUnderFiveMegabytes() throws {
    // Given a churn of 1,000,000 allocations and 999,936 frees from 2,000 stacks of 24 frames
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let trace = dir.appendingPathComponent("churn.trace").path
    try SyntheticChurnTrace.write(to: trace, allocations: 1_000_000, stacks: 2_000, depth: 24)
    // When its page is written
    let page = dir.appendingPathComponent("churn.html").path
    let view = try Harness.heapline(["view", trace, "-o", page, "--no-symbolize"], timeout: 600)
    #expect(view.status == 0, "\(view.stderr)")
    // Then it is under 5 MB, and its figures are the trace's
    let size = try #require(
      try FileManager.default.attributesOfItem(atPath: page)[.size] as? Int)
    #expect(size < 5_000_000, "the page is \(size) bytes")
    print("page of a 2 M-event trace: \(size) bytes")
    let text = try String(contentsOfFile: page, encoding: .utf8)
    let data = try #require(HTMLPage.embeddedData(of: text))
    let object = try JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any]
    let totals = (object?["report"] as? [String: Any])?["totals"] as? [String: Any]
    #expect(totals?["allocations"] as? Int == 1_000_000)
    #expect(totals?["peak_live_bytes"] as? Int == 64 * 48)
  }

  @Test func aDamagedTraceFailsAsReportFailsAndLeavesTheOldPageAsItWas() throws {
    // Given a real trace with a bit flipped in a chunk, and a page already in place
    let (trace, reader, dir) = try DamagedTraceTests.recorded()
    defer { try? FileManager.default.removeItem(at: dir) }
    var data = try Data(contentsOf: trace)
    data[Int(reader.chunks[0].offset) + 24 + 6] ^= 0x10
    try data.write(to: trace)
    let page = dir.appendingPathComponent("old.html")
    try Data("old page".utf8).write(to: page)
    // When it is viewed
    let view = try Harness.heapline(["view", trace.path, "-o", page.path])
    let report = try Harness.heapline(["report", trace.path])
    // Then it fails in the one line and with the status that report gives
    #expect(view.status == report.status && view.status == 2)
    #expect(view.stderr == report.stderr)
    #expect(view.stderr.hasPrefix("heapline: corrupt trace '\(trace.path)': "))
    // And the old page is untouched, with no temporary file left beside it
    #expect(try Data(contentsOf: page) == Data("old page".utf8))
    let left = try FileManager.default.contentsOfDirectory(atPath: dir.path)
    #expect(left.sorted() == ["blocks", "blocks.trace", "old.html"], "\(left)")
  }

  @Test func aPageOverItsOwnTraceIsRefused() throws {
    let (trace, _, dir) = try DamagedTraceTests.recorded()
    defer { try? FileManager.default.removeItem(at: dir) }
    let before = try Data(contentsOf: trace)
    let view = try Harness.heapline(["view", trace.path, "-o", trace.path])
    #expect(view.status == 2)
    #expect(view.stderr.split(separator: "\n").count == 1, "\(view.stderr)")
    #expect(view.stderr.contains("it is the input"), "\(view.stderr)")
    #expect(try Data(contentsOf: trace) == before)
  }
}
