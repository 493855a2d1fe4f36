import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record --rotate SECONDS`: a new, complete file every period, each holding its
/// period's allocations and the blocks live when it began. The fixture (Fixtures/rotating.c)
/// runs each phase as soon as the recorder's next file exists, so which file holds which phase
/// does not depend on how long anything takes.
@Suite struct RotationTests {
  /// What one file must say, from the fixture's phases.
  struct Expected {
    var allocations: UInt64, allocatedBytes: UInt64, frees: UInt64, freedBytes: UInt64
    var carriedBlocks: UInt64, carriedBytes: UInt64, liveBlocks: UInt64, liveBytes: UInt64
  }

  // Phase 1: 100 × 4,096 B kept. Phase 2: 50 × 1,024 B, 30 of phase 1's freed. Phase 3:
  // 20 × 256 B, 10 of phase 2's freed.
  static let files = [
    Expected(
      allocations: 100, allocatedBytes: 409_600, frees: 0, freedBytes: 0, carriedBlocks: 0,
      carriedBytes: 0, liveBlocks: 100, liveBytes: 409_600),
    Expected(
      allocations: 50, allocatedBytes: 51_200, frees: 30, freedBytes: 122_880, carriedBlocks: 100,
      carriedBytes: 409_600, liveBlocks: 120, liveBytes: 409_600 + 51_200 - 122_880),
    Expected(
      allocations: 20, allocatedBytes: 5_120, frees: 10, freedBytes: 10_240, carriedBlocks: 120,
      carriedBytes: 337_920, liveBlocks: 130, liveBytes: 337_920 + 5_120 - 10_240),
  ]

  /// Records the fixture with `--rotate 1` and `options`; returns the files, in order.
  func record(_ mode: String, options: [String] = [], in dir: URL) throws -> (
    files: [String], result: Harness.Result
  ) {
    let program = try Harness.fixture("rotating", in: dir)
    let trace = dir.appendingPathComponent("server.trace").path
    let result = try Harness.heapline(
      ["record", "--rotate", "1", "-o", trace] + options + ["--", program, trace, mode])
    #expect(result.status != 74 && result.status != 75, "fixture: \(result.stderr)")
    let names = try FileManager.default.contentsOfDirectory(atPath: dir.path)
      .filter { $0.hasPrefix("server.") }.sorted()
    return (names.map { dir.appendingPathComponent($0).path }, result)
  }

  func check(_ file: String, against expected: Expected) throws {
    let totals = try Statistics(reader: TraceReader(path: file)).totals
    #expect(totals.allocationCount == expected.allocations, "\(file)")
    #expect(totals.allocatedBytes == expected.allocatedBytes, "\(file)")
    #expect(totals.freeCount == expected.frees, "\(file)")
    #expect(totals.freedBytes == expected.freedBytes, "\(file)")
    #expect(totals.carriedOverBlocks == expected.carriedBlocks, "\(file)")
    #expect(totals.carriedOverBytes == expected.carriedBytes, "\(file)")
    #expect(totals.liveBlocks == expected.liveBlocks, "\(file)")
    #expect(totals.liveBytes == expected.liveBytes, "\(file)")
    #expect(totals.unmatchedFreeCount == 0, "\(file)")
  }

  @Test func eachFileHoldsItsPeriodsAllocationsAndTheBlocksLiveWhenItBegan() throws {
    // Given a program recorded with --rotate 1 that allocates in three periods
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("exit", in: dir)
    #expect(result.status == 0)
    // Then the files are named by sequence number and start time, and record lists them all
    try #require(files.count >= 3)
    let pattern = try Regex(#"/server\.\d{4}-\d{8}T\d{6}Z\.trace$"#)
    for (index, file) in files.enumerated() {
      #expect(file.contains(pattern))
      #expect(file.contains(String(format: "/server.%04d-", index + 1)))
      #expect(result.stderr.contains("trace written to \(file)"))
    }
    #expect(
      !FileManager.default.fileExists(atPath: dir.appendingPathComponent("server.trace").path))
    // And each file holds exactly its period, and the blocks live when it began
    for (file, expected) in zip(files, Self.files) { try check(file, against: expected) }
    // A period after the last phase (the program may outlive one more switch) allocated nothing
    for file in files.dropFirst(3) {
      try check(
        file,
        against: Expected(
          allocations: 0, allocatedBytes: 0, frees: 0, freedBytes: 0, carriedBlocks: 130,
          carriedBytes: 332_800, liveBlocks: 130, liveBytes: 332_800))
    }
    // And every file but the last was ended by the rotation
    for file in files.dropLast() {
      #expect(try TraceReader(path: file).trailer?.endReason == .rotated)
    }
    #expect(try TraceReader(path: files.last!).trailer?.endReason == .exited)
    // And report over all the files adds up their allocations to the program's, and takes
    // the live blocks from the last file (the earlier ones' are carried over, not more)
    let runs = try Harness.heapline(["report"] + files)
    #expect(runs.status == 0, "\(runs.stderr)")
    #expect(runs.stdout.contains("  Allocations      170\n"), "\(runs.stdout)")
    #expect(runs.stdout.contains("  Bytes allocated  465,920 B\n"))
    #expect(runs.stdout.contains("  Blocks live      130\n"))
    #expect(runs.stdout.contains("  Bytes live       332,800 B\n"))
    // In any order (a shell's pattern may not sort them): the latest file's live blocks,
    // where they were the last given's (reversed: every file's, summed)
    let reversed = try Harness.heapline(["report"] + files.reversed())
    #expect(reversed.stdout.contains("  Blocks live      130\n"), "\(reversed.stdout)")
    #expect(reversed.stdout.contains("  Bytes live       332,800 B\n"))
    let firstTwo = try Harness.heapline(["report", files[1], files[0]])
    #expect(firstTwo.stdout.contains("  Blocks live      120\n"), "\(firstTwo.stdout)")
    #expect(firstTwo.stdout.contains("  Bytes live       337,920 B\n"))
    let pprof = dir.appendingPathComponent("all.pb.gz").path
    let export = try Harness.heapline(["export", "--format", "pprof", "-o", pprof] + files)
    #expect(export.status == 0, "\(export.stderr)")
  }

  @Test func aForkedChildNeitherRotatesNorWritesTheParentsFiles() throws {
    // Given a program that forks after phase one, whose child allocates 1,000 × 3,000 B and
    // lives until the parent's third file exists
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("fork", in: dir)
    #expect(result.status == 0, "\(result.stderr)")
    try #require(files.count >= 3)
    // Then the files are numbered without a gap or a repeat, and each holds the parent's
    // figures exactly, and nothing of the child's
    for (index, file) in files.enumerated() {
      #expect(file.contains(String(format: "/server.%04d-", index + 1)))
    }
    for (file, expected) in zip(files, Self.files) { try check(file, against: expected) }
  }

  @Test func everyAnalysisOpensAMiddleFileAlone() throws {
    // Given the second file of a rotated recording
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("exit", in: dir)
    #expect(result.status == 0)
    let file = try #require(files.dropFirst().first)
    // Then report, timeline, objects, leaks and the pprof export read it on its own
    let out = dir.appendingPathComponent("out").path
    for arguments in [
      ["report", file], ["timeline", file, "-o", out + ".csv"],
      ["objects", file, "-o", out + ".objects.csv"],
      ["export", "--format", "pprof", file, "-o", out + ".pb.gz"],
    ] {
      let run = try Harness.heapline(arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
    }
    // And its categories say that their persistent and transient blocks include the 100
    // carried over, which no total counts (persistent read 100 of a total of 50)
    let report = try Harness.heapline(["report", file])
    #expect(
      report.stdout.contains(
        "  Persistent and transient include the 100 blocks carried over; Total Bytes and # Total"
          + " are this file's allocations alone\n"), "\(report.stdout)")
    // And its object list has the 120 blocks live at its end: 70 carried over, 50 new
    let objects = try String(contentsOfFile: out + ".objects.csv", encoding: .utf8)
    let rows = objects.split(separator: "\r\n").dropFirst()
    #expect(rows.filter { $0.contains("phase_one") }.count == 100)
    #expect(rows.filter { $0.contains("phase_two") }.count == 50)
    // And leaks says plainly that it holds no scan, as for any trace recorded without one
    let leaks = try Harness.heapline(["leaks", file])
    #expect(leaks.stderr.contains("holds no leak scan"))
  }

  @Test func aKilledProgramLeavesEveryEarlierFileCompleteAndExact() throws {
    // Given a program killed with SIGKILL in its third period
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("kill", in: dir)
    #expect(result.status == 137)
    try #require(files.count == 3)
    // Then the first two files are whole, ended by the rotation, and exact
    for (file, expected) in zip(files.prefix(2), Self.files) {
      let reader = try TraceReader(path: file)
      #expect(reader.trailer?.endReason == .rotated)
      #expect(reader.trailer?.flags.contains(.writtenByRecorder) == false)
      try check(file, against: expected)
    }
    // And the last one is finished by record from shared memory, as any cut-short trace is
    let last = try TraceReader(path: files[2])
    #expect(last.trailer?.endReason == .endedUnfinished)
    #expect(result.stderr.contains("before the shim could finish the trace"))
    try check(files[2], against: Self.files[2])
  }

  @Test func aSampledRecordingCarriesItsExactLiveFiguresIntoEachFile() throws {
    // Given a sampled recording (every block sampled at one byte) with --rotate 1
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("exit", options: ["--sample-bytes", "1"], in: dir)
    #expect(result.status == 0)
    let usable = result.stdout.split(separator: " ").dropFirst().compactMap {
      UInt64($0.trimmingCharacters(in: .whitespacesAndNewlines))
    }
    try #require(usable.count == 3 && files.count >= 3)
    // Then each file counts its period's calls, and its live usable bytes are the program's
    let live: [(blocks: UInt64, bytes: UInt64)] = [
      (100, 100 * usable[0]), (120, 70 * usable[0] + 50 * usable[1]),
      (130, 70 * usable[0] + 40 * usable[1] + 20 * usable[2]),
    ]
    for (index, file) in files.prefix(3).enumerated() {
      let statistics = try Statistics(reader: TraceReader(path: file))
      #expect(statistics.sampleWeight?.meanBytes == 1, "\(file)")
      #expect(statistics.totals.allocationCount == Self.files[index].allocations, "\(file)")
      #expect(statistics.totals.freeCount == Self.files[index].frees, "\(file)")
      #expect(statistics.totals.liveBlocks == live[index].blocks, "\(file)")
      #expect(statistics.totals.liveBytes == live[index].bytes, "\(file)")
    }
  }

  @Test func theLeakScanAtExitGoesInTheLastFile() throws {
    // Given a rotated recording with --leaks
    let dir = try Harness.temporaryDirectory()
    let (files, result) = try record("exit", options: ["--leaks"], in: dir)
    #expect(result.status == 0)
    try #require(files.count >= 3)
    // Then the last file holds the scan, of the 130 blocks live at exit, and no other does
    func scans(_ file: String) throws -> [LeakScan] {
      var stream = try TraceReader(path: file).events()
      try stream.drainMetadata()
      return Array(stream.metadata.leakScans.values)
    }
    for file in files.dropLast() { #expect(try scans(file).isEmpty, "\(file)") }
    let scans = try scans(files.last!)
    try #require(scans.count == 1)
    #expect(scans[0].liveBlocks == 130)
    #expect(scans[0].liveBytes == 332_800)
  }

  @Test(arguments: ["0", "-3", "abc", "1.5"])
  func aRotationPeriodThatIsNotAWholePositiveNumberIsAUsageError(_ value: String) throws {
    let result = try Harness.heapline(["record", "--rotate", value, "--", "/bin/true"])
    #expect(result.status == 64)
    let first = result.stderr.split(separator: "\n").first.map(String.init) ?? ""
    #expect(first.contains("--rotate"), "\(result.stderr)")
  }
}
