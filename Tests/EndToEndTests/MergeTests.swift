import Foundation
import HeaplineTrace
import Testing

/// `heapline merge`: runs of one program as one merged profile file, which `report` and
/// `export --format pprof` read as they read the runs, and which merges again.
@Suite struct MergeTests {
  /// Three runs of the blocks fixture: 1,000, 500 and 200 blocks of 48 B, with 400, 100 and 0
  /// of them freed.
  static func threeRuns(in directory: URL) throws -> [String] {
    try [("1000", "400", "a"), ("500", "100", "b"), ("200", "0", "c")].map { blocks, freed, name in
      try RunsReportTests.record([blocks, "48", freed, "0"], name: name, in: directory)
    }
  }

  /// Merges `inputs`, which hold `runs` runs in all, into `output`.
  static func merge(_ inputs: [String], runs: Int, into output: String) throws {
    let result = try Harness.heapline(["merge"] + inputs + ["-o", output])
    guard result.status == 0 else { throw HarnessError("merge failed: \(result.stderr)") }
    let plural = runs == 1 ? "run" : "runs"
    #expect(result.stderr == "heapline: merged \(runs) \(plural) into '\(output)'\n")
  }

  @Test func aMergedFileReportsExactlyWhatItsRunsReportAndMergesAgain() throws {
    let directory = try Harness.temporaryDirectory()
    let runs = try Self.threeRuns(in: directory)
    let ab = directory.appendingPathComponent("ab.merged").path
    let abc = directory.appendingPathComponent("abc.merged").path
    let all = directory.appendingPathComponent("all.merged").path
    try Self.merge([runs[0], runs[1]], runs: 2, into: ab)
    try Self.merge([ab, runs[2]], runs: 3, into: abc)
    try Self.merge(runs, runs: 3, into: all)

    let direct = try Harness.heapline(["report", "--top", "1000"] + runs)
    #expect(direct.status == 0, "\(direct.stderr)")
    for merged in [abc, all] {
      let report = try Harness.heapline(["report", "--top", "1000", merged])
      #expect(report.status == 0, "\(report.stderr)")
      #expect(report.stdout == direct.stdout)
    }
    // The stack of make_blocks' malloc holds all three runs' blocks, summed
    #expect(
      direct.stdout.contains(
        "#1 57,600 B live in 1,200 blocks; 81,600 B allocated in 1,700 allocations\n"
          + "    make_blocks "),
      "\(direct.stdout)")
    // Each run keeps its source, in the order merged
    for (number, run) in runs.enumerated() {
      #expect(direct.stdout.contains("  Run \(number + 1): '\(run)', "))
    }
    // Smaller than the traces it stands for
    let size = { (path: String) in
      try #require(FileManager.default.attributesOfItem(atPath: path)[.size] as? Int)
    }
    #expect(try size(all) < runs.map(size).reduce(0, +))
  }

  @Test func aMergedFileExportsTheSamePprofProfileAsItsRuns() throws {
    let directory = try Harness.temporaryDirectory()
    let runs = try Self.threeRuns(in: directory)
    let merged = directory.appendingPathComponent("runs.merged").path
    try Self.merge(runs, runs: 3, into: merged)
    let fromRuns = directory.appendingPathComponent("runs.pb.gz").path
    let fromMerged = directory.appendingPathComponent("merged.pb.gz").path
    for (inputs, output) in [(runs, fromRuns), ([merged], fromMerged)] {
      let result = try Harness.heapline(["export", "--format", "pprof", "-o", output] + inputs)
      #expect(result.status == 0, "\(result.stderr)")
    }
    #expect(
      try Data(contentsOf: URL(fileURLWithPath: fromMerged))
        == Data(contentsOf: URL(fileURLWithPath: fromRuns)))
  }

  @Test func commandsThatReplayEventsRefuseAMergedFileInOneLine() throws {
    let directory = try Harness.temporaryDirectory()
    let runs = try Self.threeRuns(in: directory)
    let merged = directory.appendingPathComponent("runs.merged").path
    try Self.merge(runs, runs: 3, into: merged)
    // diff too, given it first or second: it called a merged file a corrupt trace
    let commands = [
      ["timeline", merged], ["objects", merged], ["leaks", merged], ["diff", merged, runs[0]],
      ["diff", runs[0], merged],
    ]
    for command in commands {
      let result = try Harness.heapline(command)
      #expect(result.status != 0)
      #expect(
        result.stderr
          == "heapline: '\(merged)' is a merged profile (heapline merge), which holds no events:"
          + " heapline report and heapline export --format pprof read it; this command takes a"
          + " trace\n", "\(command)")
    }
    let at = try Harness.heapline(["report", merged, "--at", "0.001"])
    #expect(at.status != 0)
    #expect(
      at.stderr
        == "heapline: --at takes traces: '\(merged)' is a merged profile, which holds its runs'"
        + " ends\n")
  }

  @Test func aRunGivenTwiceIsRefusedInOneLineRatherThanCountedTwice() throws {
    let directory = try Harness.temporaryDirectory()
    let runs = try Self.threeRuns(in: directory)
    let merged = directory.appendingPathComponent("ab.merged").path
    try Self.merge([runs[0], runs[1]], runs: 2, into: merged)
    let copy = directory.appendingPathComponent("copy.trace").path
    try FileManager.default.copyItem(atPath: runs[2], toPath: copy)
    let cases: [([String], String)] = [
      (["report", runs[0], runs[0]], "'\(runs[0])' is given twice"),
      (["merge", runs[2], copy, "-o", "\(directory.path)/x.merged"], "'\(runs[2])' and '\(copy)'"),
      (
        ["export", "--format", "pprof", "-o", "\(directory.path)/x.pb.gz", merged, runs[1]],
        "'\(merged)' and '\(runs[1])'"
      ),
    ]
    for (arguments, names) in cases {
      let result = try Harness.heapline(arguments)
      #expect(result.status != 0, "\(arguments)")
      let ending = names.hasSuffix("twice") ? "" : " hold the same run"
      #expect(
        result.stderr
          == "heapline: \(names)\(ending): each run is counted once, so give it once\n",
        "\(arguments)")
    }
    // Runs that differ, each once, still merge
    let all = try Harness.heapline(["report", merged, runs[2]])
    #expect(all.status == 0, "\(all.stderr)")
  }

  @Test func aDamagedMergedFileIsOneLineAndANonZeroExit() throws {
    let directory = try Harness.temporaryDirectory()
    let runs = try Self.threeRuns(in: directory)
    let merged = directory.appendingPathComponent("runs.merged").path
    try Self.merge([runs[0]], runs: 1, into: merged)
    var bytes = try Data(contentsOf: URL(fileURLWithPath: merged))
    bytes.removeLast(bytes.count / 2)
    try bytes.write(to: URL(fileURLWithPath: merged))
    let result = try Harness.heapline(["report", merged])
    #expect(result.status != 0)
    #expect(result.stderr.hasPrefix("heapline: '\(merged)' is not a readable merged profile: "))
    #expect(result.stderr.split(separator: "\n").count == 1)
    let missing = try Harness.heapline(["merge", runs[0], "-o"])
    #expect(missing.status == 64)
  }
}
