import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Blocks whose chunks held pointers before them: the words a block has not written are not
/// its pointers, and no leak hides behind them (Fixtures/stalechunks.c).
@Suite struct LeakStaleChunkTests {
  @Test func wordsABlockNeverWroteNeitherHideALeakNorMakeACycle() throws {
    // Given a record freed without its 40-byte name, whose chunk the next malloc got back and
    // kept in a global, and two nodes that pointed to each other, whose chunks two blocks got
    // back and dropped unwritten: the name was reachable through the old record's word (0
    // lost, exit 0), and the two blocks were one leaked cycle
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("stalechunks", in: dir)
    let trace = dir.appendingPathComponent("stale.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "reused 1 1\n", "the chunks were not reused: the test tests nothing")
    // Then, as memcheck says: 232 B in 3 blocks definitely lost, the name and the two blocks
    let report = try LeakReport.read(path: trace, symbolizer: Symbolizer())
    #expect(report.definitelyLost == LeakAmount(blocks: 3, bytes: 232))
    #expect(report.indirectlyLost == LeakAmount())
    #expect(report.possiblyLost == LeakAmount())
    let groups = Dictionary(uniqueKeysWithValues: report.groups.map { ($0.name, $0) })
    #expect(groups.count == 2, "\(groups.keys)")
    #expect(groups["Malloc 48 Bytes"]?.kind == .rootLeak)
    #expect(groups["Malloc 96 Bytes"]?.kind == .rootLeak)
    #expect(groups["Malloc 96 Bytes"]?.instances == 2)
  }

  @Test func aBlockWithAGuardPageIsScannedWhereReadableAndReportedWhenLost() throws {
    // Given two kept blocks with an unreadable page inside, each the only holder of a block on
    // either side of it, and a dropped one: the scan took each for a stale entry of the live
    // table, scanned none and reported none (907 B and 911 B lost, the 1 MiB one not)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("guardpage", in: dir)
    let trace = dir.appendingPathComponent("guard.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    // Then only the dropped block is lost, as memcheck says
    let report = try LeakReport.read(path: trace, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount(blocks: 1, bytes: 1 << 20))
    #expect(report.indirectlyLost == LeakAmount())
    #expect(report.possiblyLost == LeakAmount())
  }

  @Test(arguments: [
    (
      "dropped", LeakAmount(blocks: 1, bytes: 8192), LeakAmount(blocks: 1, bytes: 100),
      LeakAmount()
    ),
    ("kept", LeakAmount(), LeakAmount(), LeakAmount()),
    ("cookie", LeakAmount(), LeakAmount(), LeakAmount(blocks: 2, bytes: 8292)),
  ])
  func aBlockWhoseFirstPageIsAGuardIsTheProgramsNotAStaleEntry(
    mode: String, definitely: LeakAmount, indirectly: LeakAmount, possibly: LeakAmount
  ) throws {
    // Given a block whose first page the program made unreadable, the only holder of a block of
    // 100 B: the scan took it for a stale entry of the live table, so it was never reported and
    // the 100 B were definitely lost whether it was held or not, and a pointer to its second
    // word crashed the program at exit (the scan read its first word for an array's cookie)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("firstguard", in: dir)
    let trace = dir.appendingPathComponent("first.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, mode])
    #expect(result.status == 0, "\(result.stderr)")
    // Then it is scanned where readable and reported when lost. memcheck agrees when it is
    // dropped; it calls it lost when held too, as it follows no pointer to an unreadable word
    let report = try LeakReport.read(path: trace, symbolizer: nil)
    #expect(report.definitelyLost == definitely)
    #expect(report.indirectlyLost == indirectly)
    #expect(report.possiblyLost == possibly)
  }

  @Test func wordsThatARealloccedMappingGaveUpHideNoLeak() throws {
    // Given a block of 1 MiB, a mapping of its own, that held the only pointer to a block of
    // 100 B and was shrunk in place to 64 B: zeroing left mappings alone, and the pointer past
    // the new size kept the block reachable
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("shrunkmap", in: dir)
    let trace = dir.appendingPathComponent("shrunk.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    let usable = result.stdout.split(separator: " ").last.flatMap { Int($0.dropLast()) }
    #expect((usable ?? 0) > 2008, "the block was not shrunk in place: \(result.stdout)")
    // Then the 100 B are definitely lost, as memcheck says
    let report = try LeakReport.read(path: trace, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount(blocks: 1, bytes: 100))
  }
}
