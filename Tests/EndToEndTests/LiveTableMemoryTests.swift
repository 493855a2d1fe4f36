import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// What the shim keeps per live block, at the scale of a real program (Fixtures/liveset.c:
/// 2,000,000 live blocks of 64 B from make_live_set, kept to the end).
@Suite struct LiveTableMemoryTests {
  static let blocks = 2_000_000

  /// The fixture's lines: the peak RSS in kB and, under the shim, the live table's figures.
  struct Figures {
    var peakKB: Int
    var gained: Int?, held: Int?, tableBytes: Int?
  }

  static func figures(_ stdout: String) throws -> Figures {
    let lines = stdout.split(separator: "\n").map(String.init)
    try #require(lines.first == "made \(blocks) blocks of 64 bytes", "\(stdout)")
    let peak = try #require(lines.dropFirst().first?.split(separator: " ").last.flatMap { Int($0) })
    var figures = Figures(peakKB: peak)
    if lines.count > 2 {
      // "live table gained G blocks, holds N in B bytes"
      let words = lines[2].split(separator: " ").map(String.init)
      try #require(words.count == 10, "\(lines[2])")
      figures.gained = Int(words[3])
      figures.held = Int(words[6])
      figures.tableBytes = Int(words[8])
    }
    return figures
  }

  @Test func twoMillionLiveBlocksCostTheShimAtMost24BytesEachAndRaiseThePeakRSSAtMostHalf() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("liveset", in: dir)
    let untraced = try Harness.run(program, ["\(Self.blocks)", "64"])
    #expect(untraced.status == 0)
    let plain = try Self.figures(untraced.stdout)
    #expect(plain.tableBytes == nil)

    let trace = dir.appendingPathComponent("liveset.trace").path
    let recorded = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "\(Self.blocks)", "64"])
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let traced = try Self.figures(recorded.stdout)

    // The table gained the fixture's blocks and its one array of pointers, nothing else
    #expect(traced.gained == Self.blocks + 1)
    // All in (every page the table and its allocation infos map, at the table's load at this
    // size): at most 24 B a block
    let held = try #require(traced.held)
    let bytes = try #require(traced.tableBytes)
    #expect(bytes <= 24 * held, "\(bytes) B for \(held) blocks")
    // The traced program's peak RSS is at most 1.5 times its own
    #expect(
      traced.peakKB * 2 <= plain.peakKB * 3,
      "traced \(traced.peakKB) kB, untraced \(plain.peakKB) kB")

    // And the trace holds every block, live at the end
    let stats = try Statistics(reader: try TraceReader(path: trace))
    let category = try #require(stats.category(named: "Malloc 64 Bytes"))
    #expect(category.persistentCount == Self.blocks)
    #expect(category.persistentBytes == Self.blocks * 64)
  }

  @Test func theLeakScanOfAProgramThatExitsWithTwoMillionLostBlocksRaisesThePeakRSSAtMostHalf()
    throws
  {
    // Given a program that returns from main with a list of 2 M blocks of 64 B it lost
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("liveset", in: dir)
    let untraced = try Harness.run(program, ["\(Self.blocks)", "64", "lost"])
    #expect(untraced.status == 0)
    let plain = try Self.figures(untraced.stdout)

    // When it is recorded with the leak scan at exit, as by default, whose peak the program's
    // exit is (ru_maxrss: the record command's is a tenth of it)
    let trace = dir.appendingPathComponent("lost.trace").path
    let recorded = try AnalysisScaleTests.peakResidentKiB(
      ["record", "-o", trace, "--", program, "\(Self.blocks)", "64", "lost"])

    // Then its peak RSS is at most 1.5 times its own: the scan writes what it finds as it goes,
    // and indexes each block in 12 bytes
    #expect(
      recorded.kib * 2 <= plain.peakKB * 3, "traced \(recorded.kib) kB, untraced \(plain.peakKB) kB"
    )
    // And the scan found the list whole: its head definitely lost, every other block through it
    let scan = try #require(try Self.lastLeakScan(trace))
    #expect(scan.isComplete)
    #expect(scan.blocks.count == Self.blocks)
    #expect(scan.blocks.allSatisfy { $0.size == 64 && $0.reachability == .unreachable })
    #expect(scan.edges.count == Self.blocks - 1)
    // And the trace's peak RSS is the scan's, sampled before the scan let its memory go
    let totals = try Statistics(reader: try TraceReader(path: trace)).totals
    let peak = try #require(totals.peakRSSBytes)
    #expect(
      peak >= UInt64(recorded.kib) * 1024 * 95 / 100, "\(peak) B, ru_maxrss \(recorded.kib) kB")
    let report = try Harness.heapline(["leaks", trace, "--no-symbolize"])
    #expect(report.stdout.contains("Definitely lost         1 block  (64 B)"), "\(report.stdout)")
    #expect(report.stdout.contains("Indirectly lost 1,999,999 blocks (127,999,936 B)"))
  }

  @Test func aProgramThatStartsThousandsOfDetachedThreadsPeaksWithin48MiBOfItsOwnRSS() throws {
    // Given a program that starts 3,000 detached threads, 16 at a time, each allocating and
    // freeing 2,007 bytes: an exiting thread that frees other threads' thread-local blocks
    // after its own destructors had run took a buffer of the shim's for it and never gave it
    // back, until the shim had made all 1,024 (162 MB against 1.5 MB untraced)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("detached", in: dir)
    let untraced = try Harness.run(program, ["3000"])
    let trace = dir.appendingPathComponent("detached.trace").path
    let recorded = try Harness.heapline([
      "record", "--no-leaks", "-o", trace, "--", program, "3000",
    ])
    #expect(untraced.status == 0)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let peak: (String) -> Int? = { stdout in
      stdout.split(separator: "\n").last { $0.hasPrefix("peak ") }.flatMap { Int($0.dropFirst(5)) }
    }
    let plainKB = try #require(peak(untraced.stdout))
    let tracedKB = try #require(peak(recorded.stdout))
    #expect(tracedKB <= plainKB + 48 * 1024, "traced \(tracedKB) kB, untraced \(plainKB) kB")
    // And every thread's block is in the trace, freed
    let stats = try Statistics(reader: try TraceReader(path: trace))
    let blocks = try #require(stats.category(named: "Malloc 2.00 KiB"))
    #expect(blocks.totalCount == 3000)
    #expect(blocks.totalBytes == 3000 * 2007)
    #expect(blocks.persistentCount == 0)
  }

  static func lastLeakScan(_ trace: String) throws -> LeakScan? {
    var stream = try TraceReader(path: trace).events()
    try stream.drainMetadata()
    while try stream.next() != nil {}
    return stream.metadata.leakScans.values.max { $0.id < $1.id }
  }

  @Test func theTrailerGivesTheStackTablesMemoryForTheFramesTheTraceHolds() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace").path
    let recorded = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace, "--", program, "1000", "48", "500", "0"])
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let reader = try TraceReader(path: trace)
    var stream = reader.events()
    try stream.drainMetadata()
    // The table holds every frame the trace names, in 16-byte slots at most half full, from
    // 2^14 slots up by doubling, with each id's slot in 4 bytes (ids are at most half the
    // slots); its table of return addresses each distinct one, likewise from 2^12 slots
    let frames = stream.metadata.stackNodes.count
    var slots = 1 << 14
    while frames * 2 > slots { slots *= 2 }
    let addresses = Set(stream.metadata.stackNodes.values.map(\.pc)).count
    var addressSlots = 1 << 12
    while addresses * 2 > addressSlots { addressSlots *= 2 }
    let trailer = try #require(reader.trailer)
    #expect(
      trailer.stackTableBytes == UInt32(slots * 16 + (slots / 2 + 2) * 4 + addressSlots * 16),
      "\(frames) frames, \(addresses) return addresses")
    #expect(trailer.stackFramesCut == 0)
  }
}
