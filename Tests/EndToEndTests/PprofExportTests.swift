import Foundation
import HeaplineTrace
import Testing

/// `heapline export --format pprof`, read by `go tool pprof`: the phases fixture's blocks come
/// out with their exact counts and bytes, category and line, in each of Go's four heap types.
@Suite struct PprofExportTests {
  /// Exports `traces` as pprof into the first one's directory and returns the profile's path.
  static func export(_ traces: [String], _ arguments: [String] = [], name: String) throws
    -> String
  {
    let directory = URL(fileURLWithPath: traces[0]).deletingLastPathComponent()
    let profile = directory.appendingPathComponent("\(name).pb.gz").path
    let result = try Harness.heapline(
      ["export"] + traces + ["--format", "pprof", "-o", profile] + arguments)
    guard result.status == 0 else {
      throw HarnessError("export failed (\(result.status)): \(result.stderr)")
    }
    return profile
  }

  /// The samples of one category, as (value, frames) sorted by value.
  static func samples(_ traces: [GoPprof.Trace], category: String) -> [[String]] {
    traces.filter { $0.labels["category"] == category }
      .map { ["\($0.value)"] + $0.frames }
      .sorted { $0.lexicographicallyPrecedes($1) }
  }

  /// The line of phases.c that allocates the Steps blocks.
  static func stepsLine() throws -> Int {
    let source = try String(
      contentsOf: Harness.fixtures.appendingPathComponent("phases.c"), encoding: .utf8)
    let lines = source.components(separatedBy: "\n")
    return try #require(lines.firstIndex { $0.contains("malloc(4000)") }) + 1
  }

  @Test(.enabled(if: GoPprof.go != nil, GoPprof.skipReason))
  func goPprofReadsEachCategorysBlocksExactlyInAllFourTypes() throws {
    // Given the phases fixture: Steps 10 then 20 × 4,000 B from make_steps (the first 10 freed
    // at the end), Spike 100 × 10,000 B all freed, Growth 50 × 1,000 B. A stack whose blocks
    // were all freed is a sample whose in-use figures are 0.
    let trace = try PhasesFixture.phases.get().trace
    let profile = try Self.export([trace], name: "phases")
    let stacks = ["make_steps", "phases", "main"]
    let expected: [String: [String: [[String]]]] = [
      "alloc_objects": [
        "Steps": [["10"] + stacks, ["20"] + stacks], "Spike": [["100", "spike", "phases", "main"]],
        "Growth": [["50", "grow", "phases", "main"]],
      ],
      "alloc_space": [
        "Steps": [["40000"] + stacks, ["80000"] + stacks],
        "Spike": [["1000000", "spike", "phases", "main"]],
        "Growth": [["50000", "grow", "phases", "main"]],
      ],
      "inuse_objects": [
        "Steps": [["0"] + stacks, ["20"] + stacks], "Spike": [["0", "spike", "phases", "main"]],
        "Growth": [["50", "grow", "phases", "main"]],
      ],
      "inuse_space": [
        "Steps": [["0"] + stacks, ["80000"] + stacks], "Spike": [["0", "spike", "phases", "main"]],
        "Growth": [["50000", "grow", "phases", "main"]],
      ],
    ]
    let totals = try PhasesFixture.reportTotals(trace)
    let totalKeys = [
      "alloc_objects": "allocations", "alloc_space": "allocated_bytes",
      "inuse_objects": "live_blocks", "inuse_space": "live_bytes",
    ]
    for (type, categories) in expected {
      // When go tool pprof lists its samples
      let traces = try GoPprof.traces(profile, type: type)
      // Then each category's stacks carry the fixture's figures
      for (category, samples) in categories {
        #expect(Self.samples(traces, category: category) == samples, "\(type) \(category)")
      }
      // And all samples add up to the report's totals
      #expect(traces.map(\.value).reduce(0, +) == totals[totalKeys[type]!], "\(type)")
    }
    // And -top places the live Steps bytes at the malloc's line in make_steps
    let top = try GoPprof.top(profile, type: "inuse_space")
    let line = try Self.stepsLine()
    let steps = top.filter {
      $0.key.hasPrefix("make_steps ") && $0.key.hasSuffix("phases.c:\(line)")
    }
    #expect(steps.values.reduce(0, +) == 80_000, "\(top)")
  }

  @Test(.enabled(if: GoPprof.go != nil, GoPprof.skipReason))
  func atAnInstantTheProfileIsTheLiveMemoryThen() throws {
    // Given the instant of mark B: all 30 Steps blocks live, nothing of Spike or Growth yet
    let trace = try PhasesFixture.phases.get().trace
    let mark = try #require(try PhasesFixture.marks(trace).first { $0.name == "B" })
    let seconds = String(format: "%.9f", Double(mark.time) / 1e9)
    let profile = try Self.export([trace], ["--at", seconds], name: "at-b")
    // Then the live figures are those at B
    let bytes = try GoPprof.traces(profile, type: "inuse_space")
    #expect(
      Self.samples(bytes, category: "Steps") == [
        ["40000", "make_steps", "phases", "main"], ["80000", "make_steps", "phases", "main"],
      ])
    #expect(Self.samples(bytes, category: "Spike").isEmpty)
    #expect(Self.samples(bytes, category: "Growth").isEmpty)
    let objects = try GoPprof.traces(profile, type: "alloc_objects")
    #expect(Self.samples(objects, category: "Growth").isEmpty)
    let totals = try PhasesFixture.reportTotals(trace, ["--at", seconds])
    #expect(objects.map(\.value).reduce(0, +) == totals["allocations"])
  }

  @Test(.enabled(if: GoPprof.go != nil, GoPprof.skipReason))
  func twoRunsMergeIntoOneProfileWithBothPeaks() throws {
    // Given the phases fixture recorded twice (each process at its own addresses)
    let first = try PhasesFixture.phases.get().trace
    let second = try PhasesFixture.record(["phases"], name: "twice").trace
    // When both are exported as one profile
    let profile = try Self.export([first, second], name: "merged")
    // Then each stack is one sample with both runs' figures
    let stacks = ["make_steps", "phases", "main"]
    let bytes = try GoPprof.traces(profile, type: "alloc_space")
    #expect(Self.samples(bytes, category: "Steps") == [["160000"] + stacks, ["80000"] + stacks])
    let objects = try GoPprof.traces(profile, type: "inuse_objects")
    #expect(Self.samples(objects, category: "Growth") == [["100", "grow", "phases", "main"]])
    // And the comments give each run's peak, with its trace
    let comments = try GoPprof.run(["-comments"], profile: profile)
    for (number, trace) in [first, second].enumerated() {
      let peak = try #require(try PhasesFixture.reportTotals(trace)["peak_live_bytes"])
      let grouped = ByteCountText.grouped(UInt64(peak))
      #expect(
        comments.contains("run \(number + 1) of 2: \(trace), peak \(grouped) bytes live at "),
        "\(comments)")
    }
  }

  /// util-linux's `script`, which runs a command with a terminal for its output.
  static let script = "/usr/bin/script"

  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: script),
      "script (bsdutils) is not installed: no terminal to refuse"))
  func aBinaryProfileIsNotWrittenToATerminal() throws {
    let trace = try PhasesFixture.phases.get().trace
    for output in ["", " -o -"] {
      // When stdout is a terminal
      let command = "\(Harness.heapline) export \(trace) --format pprof\(output)"
      let result = try Harness.run(Self.script, ["-qec", command, "/dev/null"], timeout: 120)
      // Then the export refuses, in one line, with the usage status
      #expect(result.status == 64, "\(result.stdout)")
      // A terminal ends its lines with CR LF, one Character to Swift.
      let first = result.stdout.split(whereSeparator: \.isNewline).first.map(String.init) ?? ""
      #expect(
        first.trimmingCharacters(in: .whitespacesAndNewlines)
          == "heapline: --format pprof writes a binary file, not to a terminal: give -o FILE.pb.gz")
    }
  }

  @Test func severalTracesAreForPprofOnly() throws {
    let trace = try PhasesFixture.phases.get().trace
    let result = try Harness.heapline(["export", trace, trace, "--format", "folded"])
    #expect(result.status == 64)
    #expect(
      result.stderr.split(separator: "\n").first
        == "heapline: --format folded takes one trace; --format pprof merges several")
  }
}
