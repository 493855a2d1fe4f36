import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline diff`, `objects` and `export` on the phases fixture, whose blocks are known.
@Suite struct GenerationEndToEndTests {
  func run(_ arguments: [String]) throws -> String {
    let result = try Harness.heapline(arguments)
    #expect(result.status == 0, "\(arguments): \(result.stderr)")
    return result.stdout
  }

  @Test func diffBetweenMarksIsExactlyWhatWasKeptInBetween() throws {
    let trace = try PhasesFixture.phases.get().trace
    // A stack is named by the frames the text shows (not the allocator's or the C runtime's),
    // root first, each with its line: stacks of one function at other lines had one name
    func rows(_ from: String, _ to: String) throws -> [[String]] {
      try run(["diff", trace, "--from", from, "--to", to, "--format", "csv"])
        .split(separator: "\r\n").dropFirst().map { line in
          let fields = line.split(separator: ",").map(String.init)
          guard fields[0] == "stack" else { return fields }
          let frames = fields[1].split(separator: ";").map { frame in
            let parts = frame.split(separator: " ")
            return "\(parts[0]) \(parts.last!.split(separator: "/").last!)"
          }
          return ["stack", frames.joined(separator: ";")] + fields[2...]
        }
    }
    // 20 Steps blocks made between A and B, all still live at B
    #expect(
      try rows("A", "B") == [
        ["category", "Steps", "20", "80000"],
        ["stack", "main phases.c:109;phases phases.c:64;make_steps phases.c:38", "20", "80000"],
      ])
    // The spike came and went between B and D; the growth stayed
    #expect(
      try rows("B", "D") == [
        ["category", "Growth", "50", "50000"],
        ["stack", "main phases.c:109;phases phases.c:68;grow phases.c:53", "50", "50000"],
      ])
    // Between D and E blocks were only freed
    #expect(
      try run(["diff", trace, "--from", "D", "--to", "E", "--format", "csv"])
        == "group,name,count,bytes\r\n")
    // From the start, what C's growth holds and the steps that outlived E are all there
    let growth = try Growth(reader: TraceReader(path: trace), from: "start", to: "end")
    #expect(growth.category(named: "Steps")?.bytes == 80_000)
    #expect(growth.category(named: "Growth")?.count == 50)
    #expect(growth.category(named: "Spike") == nil)
  }

  @Test func theTextDiffNamesTheAllocatingFunctionAndLine() throws {
    let trace = try PhasesFixture.phases.get().trace
    let text = try run(["diff", trace, "--from", "A", "--to", "B"])
    #expect(text.contains("from mark 'A'"))
    #expect(text.contains("80,000 B in 20 blocks"))
    #expect(text.contains("#0 make_steps  "))
    #expect(text.contains("phases.c:"))
  }

  @Test func foldedStacksSumToTheReportsTotals() throws {
    let trace = try PhasesFixture.phases.get().trace
    let totals = try PhasesFixture.reportTotals(trace)
    let expected = [
      "live": "live_bytes", "peak": "peak_live_bytes", "allocated": "allocated_bytes",
    ]
    for (weight, key) in expected {
      let folded = try run(["export", trace, "--format", "folded", "--weight", weight])
      let lines = folded.split(separator: "\n")
      let sum = lines.map { Int($0.split(separator: " ").last!)! }.reduce(0, +)
      #expect(sum == totals[key], "\(weight)")
      // Stacks start at main: glibc's start frames below it are left out.
      #expect(lines.allSatisfy { $0.hasPrefix("main;") })
    }
    let live = try run(["export", trace, "--format", "folded"])
    let liveLines = live.split(separator: "\n")
    #expect(liveLines.contains("main;phases;make_steps 80000"))
    #expect(liveLines.contains("main;phases;grow 50000"))
  }

  @Test func speedscopeHasAProfilePerWeightThatSumsToTheTotals() throws {
    let trace = try PhasesFixture.phases.get().trace
    let totals = try PhasesFixture.reportTotals(trace)
    let text = try run(["export", trace, "--format", "speedscope"])
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(json["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
    let frames = try #require((json["shared"] as? [String: Any])?["frames"] as? [[String: Any]])
    #expect(frames.contains { $0["name"] as? String == "make_steps" })
    let profiles = try #require(json["profiles"] as? [[String: Any]])
    let keys = ["live_bytes", "peak_live_bytes", "allocated_bytes"]
    #expect(profiles.count == keys.count)
    for (profile, key) in zip(profiles, keys) {
      #expect(profile["type"] as? String == "sampled")
      #expect(profile["unit"] as? String == "bytes")
      let weights = try #require(profile["weights"] as? [Int])
      #expect((profile["samples"] as? [[Int]])?.count == weights.count)
      #expect(weights.reduce(0, +) == totals[key])
      #expect(profile["endValue"] as? Int == totals[key])
    }
    let one = try run(["export", trace, "--format", "speedscope", "--weight", "peak"])
    #expect(one.components(separatedBy: "\"type\":\"sampled\"").count == 2)
    // The profiles are named for what they weigh: at exit, or up to --at (which was called
    // "live bytes at exit" too)
    #expect(
      profiles.map { $0["name"] as? String } == [
        "live bytes at exit", "live bytes at the peak", "bytes allocated",
      ])
    let at = try run(["export", trace, "--format", "speedscope", "--at", "0.001"])
    let named = try #require(
      try JSONSerialization.jsonObject(with: Data(at.utf8)) as? [String: Any])
    #expect(
      (named["profiles"] as? [[String: Any]])?.map { $0["name"] as? String } == [
        "live bytes at 1.000 ms", "live bytes at the peak up to then", "bytes allocated up to then",
      ])
  }

  @Test func objectsListTheStepsBlocksInAllocationOrder() throws {
    let trace = try PhasesFixture.phases.get().trace
    let table = try CSVTable(run(["objects", trace, "--category", "Steps"]))
    #expect(
      table.header == [
        "index", "alloc_time_s", "free_time_s", "address", "size", "category", "stack_id",
        "top_frame", "top_frame_source",
      ])
    #expect(table.rows.count == 30)
    let indexes = try table.integers("index")
    #expect(indexes == indexes.sorted())
    #expect(try table.integers("size").allSatisfy { $0 == 4_000 })
    #expect(
      table.rows.allSatisfy { $0[5] == "Steps" && $0[7] == "make_steps" && $0[3].hasPrefix("0x") })
    #expect(table.rows.allSatisfy { $0[8].contains("phases.c:") })
    // The first ten were freed before E; the other twenty are live at the end
    #expect(
      table.rows.map { !$0[2].isEmpty } == Array(repeating: true, count: 10)
        + Array(repeating: false, count: 20))
    // And at mark B all thirty were live, at mark E twenty
    let marks = Dictionary(try PhasesFixture.marks(trace).map { ($0.name, $0.time) }) { a, _ in a }
    for (mark, count) in [("A", 10), ("B", 30), ("E", 20)] {
      let seconds = String(format: "%.9f", Double(marks[mark]!) / 1e9)
      let live = try CSVTable(
        run(["objects", trace, "--category", "Steps", "--live-at", seconds]))
      #expect(live.rows.count == count, "at \(mark)")
    }
  }

  @Test func twoRunsCompareByStackThoughTheirAddressesDiffer() throws {
    // Given the phases fixture recorded again, and the every fixture
    let first = try PhasesFixture.phases.get()
    let second = try PhasesFixture.record(["phases"], name: "again")
    let other = try PhasesFixture.record(["every"], name: "every")
    // Then the same program's runs match stack by stack, with nothing changed in its scopes
    let same = try CSVTable(run(["diff", first.trace, second.trace, "--format", "csv"]))
    let steps = try #require(
      same.rows.first { $0[0] == "stack" && $0[1].hasSuffix(";make_steps (phases)") })
    #expect(Array(steps[2...]) == ["80000", "20", "80000", "20", "0", "0"])
    #expect(same.rows.contains(["category", "Growth", "50000", "50", "50000", "50", "0", "0"]))
    // And against another program, what went and came is the change
    let changed = try CSVTable(run(["diff", first.trace, other.trace, "--format", "csv"]))
    #expect(changed.rows.contains(["category", "Steps", "80000", "20", "0", "0", "-80000", "-20"]))
    #expect(changed.rows.contains(["category", "Ticks", "0", "0", "1920", "30", "1920", "30"]))
    let text = try run(["diff", first.trace, other.trace, "--top", "2"])
    #expect(text.contains("By stack: top 2 of"))
  }

  @Test func twoProgramsFunctionsOfOneNameAreTwoStacksEachShownWhereItWasMade() throws {
    // Given two programs that each keep blocks from a function of the same name and stack,
    // 100 blocks of 48 B in one and 30 in the other, at different lines
    let dir = try Harness.temporaryDirectory()
    var traces: [String] = []
    for (name, count, padding) in [("first", 100, ""), ("second", 30, "\n\n\n")] {
      let source = dir.appendingPathComponent("\(name).c")
      try """
      #include <stdlib.h>\(padding)
      void *kept[100];
      __attribute__((noinline)) void keep_blocks(void) {
        for (int i = 0; i < \(count); i++) kept[i] = malloc(48);
      }
      int main(void) { keep_blocks(); return 0; }
      """.write(to: source, atomically: true, encoding: .utf8)
      let program = dir.appendingPathComponent(name).path
      let built = try Harness.run("/usr/bin/env", ["cc", "-O0", "-g", "-o", program, source.path])
      try #require(built.status == 0, "\(built.stderr)")
      let trace = dir.appendingPathComponent("\(name).trace").path
      #expect(
        try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program]).status == 0)
      traces.append(trace)
    }
    // Then the diff keeps them apart, each with its own program's lines, where it matched them
    // by name and showed the second's line for the first's 100 blocks
    let csv = try CSVTable(run(["diff", traces[0], traces[1], "--format", "csv"]))
    let stacks = csv.rows.filter { $0[0] == "stack" && $0[1].contains("keep_blocks") }
    #expect(
      stacks.map { Array($0[1...]) } == [
        ["main (first);keep_blocks (first)", "4800", "100", "0", "0", "-4800", "-100"],
        ["main (second);keep_blocks (second)", "0", "0", "1440", "30", "1440", "30"],
      ])
    let text = try run(["diff", traces[0], traces[1], "--root", dir.path])
    #expect(
      text.contains(
        "(A: 4,800 B in 100 blocks; B: 0 B in 0 blocks)\n      #0 keep_blocks  first.c:4  (first)\n"
      ), "\(text)")
    #expect(
      text.contains(
        "(A: 0 B in 0 blocks; B: 1,440 B in 30 blocks)\n      #0 keep_blocks  second.c:7  (second)\n"
      ))
  }
}
