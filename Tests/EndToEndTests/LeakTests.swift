import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record` scans for leaks in C programs whose blocks the tests know, and
/// `heapline leaks` reports them (Fixtures/leaks.c lists each case and its size).
@Suite struct LeakTests {
  /// Records Fixtures/leaks.c once per test, into its own directory.
  func recordLeaks(_ extra: [String] = []) throws -> (trace: URL, result: Harness.Result) {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("leaks", in: dir)
    let trace = dir.appendingPathComponent("leaks.trace")
    let result = try Harness.heapline(["record", "-o", trace.path] + extra + ["--", program])
    return (trace, result)
  }

  func report(_ trace: URL, scan: UInt64? = nil) throws -> LeakReport {
    try LeakReport.read(path: trace.path, scan: scan, symbolizer: nil)
  }

  @Test func theAPIScanFindsExactlyTheLostBlocksAndGroupsThem() throws {
    // Given the fixture, recorded, which checks for leaks through the C API with its threads
    // waiting, one holding a block on its stack and one a pointer into a block in a register
    let (trace, result) = try recordLeaks()
    #expect(result.status == 0)
    #expect(result.stdout == "check 0: 2222 lost in 17 blocks, 110 possibly lost in 1 blocks\n")
    // Then scan 1 (the API's) finds the lost blocks, and nothing of the global's, the stack's or
    // the register's
    let report = try report(trace, scan: 1)
    #expect(report.scan.trigger == .api)
    #expect(report.scan.threadsStopped >= 2)
    #expect(report.definitelyLost == LeakAmount(blocks: 8, bytes: 1646))
    #expect(report.indirectlyLost == LeakAmount(blocks: 9, bytes: 576))
    #expect(report.possiblyLost == LeakAmount(blocks: 1, bytes: 110))
    let groups = Dictionary(uniqueKeysWithValues: report.groups.map { ($0.name, $0) })
    #expect(groups.count == 6)
    // The list: its head is where the leak starts, the other nine hang from it
    let list = try #require(groups["Malloc 64 Bytes"])
    #expect(list.kind == .rootLeak)
    #expect(list.instances == 1)
    #expect(list.definitelyLost == LeakAmount(blocks: 1, bytes: 64))
    #expect(list.indirectlyLost == LeakAmount(blocks: 9, bytes: 576))
    // The two nodes that point to each other
    let cycle = try #require(groups["Malloc 96 Bytes → Malloc 96 Bytes → Malloc 96 Bytes"])
    #expect(cycle.kind == .cycle)
    #expect(cycle.definitelyLost == LeakAmount(blocks: 2, bytes: 180))
    #expect(cycle.indirectlyLost == LeakAmount())
    // The three simple blocks, one leak three times over
    let simple = try #require(groups["Malloc 48 Bytes"])
    #expect(simple.kind == .rootLeak)
    #expect(simple.instances == 3)
    #expect(simple.definitelyLost == LeakAmount(blocks: 3, bytes: 120))
    // The block whose address is hidden by XOR
    let hidden = try #require(groups["Malloc 176 Bytes"])
    #expect(hidden.definitelyLost == LeakAmount(blocks: 1, bytes: 170))
    // The block that malloc's main arena points into, at the header of the free chunk after it
    let binned = try #require(groups["Malloc 1.25 KiB"])
    #expect(binned.kind == .rootLeak)
    #expect(binned.definitelyLost == LeakAmount(blocks: 1, bytes: 1112))
    // The block kept only by a pointer into its middle
    let interior = try #require(groups["Malloc 112 Bytes"])
    #expect(interior.kind == .possiblyLost)
    #expect(interior.possiblyLost == LeakAmount(blocks: 1, bytes: 110))
  }

  @Test func theExitScanFindsTheSameOnceTheThreadsAreGone() throws {
    let (trace, _) = try recordLeaks()
    let report = try report(trace)
    #expect(report.scans.count == 2)
    #expect(report.scan.id == 2)
    #expect(report.scan.trigger == .exit)
    #expect(report.definitelyLost == LeakAmount(blocks: 8, bytes: 1646))
    #expect(report.indirectlyLost == LeakAmount(blocks: 9, bytes: 576))
    #expect(report.possiblyLost == LeakAmount(blocks: 1, bytes: 110))
  }

  @Test func whatALibrarysDestructorDoesAtExitIsRecordedAndScanned() throws {
    // Given a program linking a library whose destructor, which the loader runs after the
    // preload library's, frees a block of 222 bytes and drops one of 111 that it makes
    let dir = try Harness.temporaryDirectory()
    let (program, _) = try Harness.fixture("dtorhost", linking: "dtorlib", in: dir)
    let trace = dir.appendingPathComponent("dtor.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "ok\n")
    // Then both are in the trace (the recording ended before them), and the dropped block is
    // definitely lost, as memcheck finds it
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "Malloc 224 Bytes")?.totalCount == 1)
    #expect(stats.category(named: "Malloc 224 Bytes")?.persistentCount == 0)
    #expect(stats.category(named: "Malloc 112 Bytes")?.persistentCount == 1)
    // And the library's exit handler, registered by its constructor before the shim's ran, ran
    // while the recording was on: its block is in the trace, and still reachable
    #expect(stats.category(named: "Malloc 304 Bytes")?.persistentCount == 1)
    let report = try LeakReport.read(path: trace, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount(blocks: 1, bytes: 111))
  }

  @Test func aCopyOfThePreloadLibraryByAnotherNameScansTheSameRootsAndFindsTheSame() throws {
    // Given two copies of the preload library whose paths are the same length (so that the
    // program's environment is too), one by its own name and one by another, each named by
    // HEAPLINE_PRELOAD
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("leaks", in: dir)
    let built = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("libheapline-preload.so")
    var scans: [UInt64] = []
    for name in ["libheapline-preload.so", "libxxxxxxxxx-xxxxxxx.so"] {
      let copy = dir.appendingPathComponent(name)
      try FileManager.default.copyItem(at: built, to: copy)
      let trace = dir.appendingPathComponent("leaks.trace").path
      let result = try Harness.heapline(
        ["record", "-o", trace, "--", program], environment: ["HEAPLINE_PRELOAD": copy.path])
      #expect(result.status == 0)
      // Then the exit scan finds what it finds with the library as built, from the same bytes of
      // roots: the shim's own data is none of them, whatever its file is called (with another
      // name, its 1.6 MB of data were scanned, and the stale bytes of a signal mask it had
      // copied kept a lost block reachable)
      let report = try report(URL(fileURLWithPath: trace))
      #expect(report.scan.trigger == .exit)
      #expect(report.definitelyLost == LeakAmount(blocks: 8, bytes: 1646))
      #expect(report.indirectlyLost == LeakAmount(blocks: 9, bytes: 576))
      #expect(report.possiblyLost == LeakAmount(blocks: 1, bytes: 110))
      scans.append(report.scan.rootBytes)
    }
    #expect(scans.count == 2 && scans[0] == scans[1], "\(scans)")
  }

  @Test func aStormOfLeakSignalsGetsAScanEveryTenMillisecondsAtMost() throws {
    // Given a program that asks for a scan by signal 2,000 times, 100 µs apart
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("leakstorm", in: dir)
    let trace = dir.appendingPathComponent("storm.trace")
    let result = try Harness.heapline(
      ["record", "--leaks-signal", "10", "-o", trace.path, "--", program])
    #expect(result.status == 0)
    #expect(result.stdout == "sent 2000\n")
    // Then the shim's thread, woken by the signals, still scans at most once a 10 ms gap, as
    // when it looked every 10 ms: the program is not stopped for scan after scan (woken at
    // once each time, it made 934 scans in 0.7 s, where this bound is 72)
    let report = try report(trace)
    let bySignal = report.scans.filter { $0.trigger == .signal }
    let duration = try Statistics(reader: TraceReader(path: trace.path)).trace.durationNanoseconds
    #expect(!bySignal.isEmpty)
    #expect(
      UInt64(bySignal.count) <= duration / 10_000_000 + 2, "\(bySignal.count) in \(duration) ns")
  }

  @Test func theTextReportShowsEachGroupWithItsAllocationStack() throws {
    let (trace, _) = try recordLeaks()
    let result = try Harness.heapline([
      "leaks", trace.path, "--scan", "1", "--root", Harness.fixtures.path,
    ])
    // Leaks found: exit status 1
    #expect(result.status == 1)
    let source = try String(
      contentsOf: Harness.fixtures.appendingPathComponent("leaks.c"), encoding: .utf8)
    let line = try #require(
      source.split(separator: "\n", omittingEmptySubsequences: false).firstIndex {
        $0.contains("LEAK_LIST_LINE")
      })
    #expect(result.stdout.contains("Root leak: Malloc 64 Bytes"))
    #expect(
      result.stdout.contains(
        "1 leak: 1 block (64 B) definitely lost, 9 blocks (576 B) indirectly lost"))
    #expect(result.stdout.contains("#0 leak_list  leaks.c:\(line + 1)  ("))
    #expect(
      result.stdout.contains("Leaked cycle: Malloc 96 Bytes → Malloc 96 Bytes → Malloc 96 Bytes"))
    #expect(result.stdout.contains("2 × Malloc 96 Bytes, 90 B each, allocated at:"))
    #expect(result.stdout.contains("Possibly lost: Malloc 112 Bytes"))
    #expect(result.stdout.contains("3 leaks: 3 blocks (120 B) definitely lost"))
  }

  @Test func theJSONReportHasTheTotalsAndGroups() throws {
    let (trace, _) = try recordLeaks()
    let result = try Harness.heapline(["leaks", trace.path, "--format", "json", "--no-symbolize"])
    #expect(result.status == 1)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let lost = try #require(json["definitely_lost"] as? [String: Any])
    #expect(lost["blocks"] as? Int == 8)
    #expect(lost["bytes"] as? Int == 1646)
    let groups = try #require(json["groups"] as? [[String: Any]])
    #expect(groups.count == 6)
    let cycle = try #require(groups.first { $0["kind"] as? String == "cycle" })
    #expect(cycle["name"] as? String == "Malloc 96 Bytes → Malloc 96 Bytes → Malloc 96 Bytes")
    let members = try #require(cycle["members"] as? [[String: Any]])
    #expect(members.count == 2)
    #expect(members.allSatisfy { $0["size"] as? Int == 90 })
    #expect((json["scan"] as? [String: Any])?["trigger"] as? String == "exit")
  }

  @Test func suppressionsLeaveOutTheGroupsTheyMatch() throws {
    let (trace, _) = try recordLeaks()
    let dir = trace.deletingLastPathComponent()
    // One suppression by function: the simple blocks go, the rest stay (status 1)
    let some = dir.appendingPathComponent("some.supp")
    try "# the three simple blocks\nleak:function=leak_simple\n".write(
      to: some, atomically: true, encoding: .utf8)
    let partial = try Harness.heapline(["leaks", trace.path, "--suppressions", some.path])
    #expect(partial.status == 1)
    #expect(!partial.stdout.contains("Root leak: Malloc 48 Bytes\n"))
    #expect(partial.stdout.contains("Suppressed: 3 blocks (120 B) in 1 group"))
    // Every group matched, by function, module and file: nothing left (status 0)
    let all = dir.appendingPathComponent("all.supp")
    try """
    leak:function=leak_*
    leak:function=keep
    leak:module=no-such-module.so
    leak:file=*/leaks.c
    """.write(to: all, atomically: true, encoding: .utf8)
    let none = try Harness.heapline(["leaks", trace.path, "--suppressions", all.path])
    #expect(none.status == 0, "stdout: \(none.stdout)")
    #expect(none.stdout.contains("No leaks"))
    let byModule = dir.appendingPathComponent("module.supp")
    try "leak:module=leaks\n".write(to: byModule, atomically: true, encoding: .utf8)
    #expect(
      try Harness.heapline(["leaks", trace.path, "--suppressions", byModule.path]).status == 0)
  }

  @Test func noLeaksMeansExitStatusZero() throws {
    // Given a program that leaks nothing
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("true.trace")
    #expect(try Harness.heapline(["record", "-o", trace.path, "--", "true"]).status == 0)
    let result = try Harness.heapline(["leaks", trace.path])
    #expect(result.status == 0, "stdout: \(result.stdout)")
    #expect(result.stdout.contains("No leaks"))
  }
}

/// Bad input to `heapline leaks`: one line on stderr, exit status 2.
@Suite struct LeakBadInputTests {
  func expectOneLineError(_ result: Harness.Result, mentioning text: String) {
    #expect(result.status == 2)
    #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
    #expect(result.stderr.hasPrefix("heapline: "))
    #expect(result.stderr.contains(text), "stderr: \(result.stderr)")
  }

  @Test func aMalformedSuppressionsFileIsAnErrorThatNamesTheLine() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    _ = try Harness.heapline(["record", "-o", trace.path, "--", program, "10", "48", "0", "0"])
    let bad = dir.appendingPathComponent("bad.supp")
    try "# fine\nleak:function=ok\nleak:symbol=nope\n".write(
      to: bad, atomically: true, encoding: .utf8)
    expectOneLineError(
      try Harness.heapline(["leaks", trace.path, "--suppressions", bad.path]),
      mentioning: "line 3")
    let missing = dir.appendingPathComponent("missing.supp").path
    expectOneLineError(
      try Harness.heapline(["leaks", trace.path, "--suppressions", missing]),
      mentioning: "missing.supp")
  }

  @Test func aTraceWithoutALeakScanIsAnError() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace")
    _ = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", program, "10", "48", "0", "0"])
    expectOneLineError(try Harness.heapline(["leaks", trace.path]), mentioning: "no leak scan")
    expectOneLineError(
      try Harness.heapline(["leaks", trace.path, "--scan", "3"]), mentioning: "no leak scan")
    // Scans count from 1: --scan 0 is a usage error, as --scan -1 is (it read the trace, and
    // said it had no scan 0, with status 2)
    expectUsageError(
      try Harness.heapline(["leaks", trace.path, "--scan", "0"]),
      mentioning: "--scan counts from 1",
      subcommand: "leaks")
  }

  @Test func aFileThatIsNotATraceIsAnError() throws {
    let dir = try Harness.temporaryDirectory()
    let file = dir.appendingPathComponent("text.trace")
    try Data("not a trace, just some words that are long enough to read\n".utf8).write(to: file)
    expectOneLineError(
      try Harness.heapline(["leaks", file.path]), mentioning: "not a Heapline trace")
  }
}
