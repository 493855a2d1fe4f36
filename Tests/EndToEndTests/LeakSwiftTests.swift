import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline record` on a Swift program (Tests/LeakFixture) whose leaks the tests know: retain
/// cycles through closures, objects kept only through Swift's encoded pointers, Foundation and
/// Dispatch, and scans while threads run.
@Suite struct LeakSwiftTests {
  /// The fixture, built beside the test binary by `swift build`.
  static var fixture: String {
    URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("heapline-leak-fixture").path
  }

  func record(_ scenario: String, _ extra: [String] = []) throws -> (URL, Harness.Result) {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("\(scenario).trace")
    let result = try Harness.heapline(
      ["record", "-o", trace.path] + extra + ["--", Self.fixture, scenario])
    return (trace, result)
  }

  @Test func retainCyclesAreReportedByTheirClassesAndNothingElseIs() throws {
    // Given a program that leaks a view controller in a cycle through its store's callback, and
    // a session and its delegate that point to each other (and that a global watches weakly),
    // and keeps objects only through a String, an enum payload, a Dictionary and a strong
    // reference to an object that also has weak ones
    let (trace, result) = try record("cycles")
    #expect(result.status == 0)
    #expect(result.stdout == "check 0: 5 lost, 0 possibly lost\n")
    let report = try LeakReport.read(path: trace.path, scan: 1, symbolizer: nil)
    // Then the scan finds the two cycles, named by their classes, and nothing else
    #expect(
      report.groups.map(\.name).sorted() == [
        "Session → Delegate → Session",
        "ViewController → Store → closure context → ViewController",
      ])
    let controller = try #require(report.groups.first { $0.name.hasPrefix("ViewController") })
    #expect(controller.kind == .cycle)
    // 200 (controller) + 232 (store) + 168 (the closure's context)
    #expect(controller.definitelyLost == LeakAmount(blocks: 3, bytes: 600))
    #expect(
      controller.members.map(\.category.name) == [
        "heapline_leak_fixture.ViewController", "heapline_leak_fixture.Store",
        "Swift closure context",
      ])
    let session = try #require(report.groups.first { $0.name.hasPrefix("Session") })
    // 152 (session) + 184 (delegate); the weak reference to the session does not keep it
    #expect(session.definitelyLost == LeakAmount(blocks: 2, bytes: 336))
    #expect(report.indirectlyLost == LeakAmount())
    #expect(report.possiblyLost == LeakAmount())
  }

  @Test func theReportNamesTheCycleAndItsAllocatingFunctions() throws {
    let (trace, _) = try record("cycles")
    let result = try Harness.heapline(["leaks", trace.path])
    #expect(result.status == 1)
    #expect(
      result.stdout.contains(
        "Leaked cycle: ViewController → Store → closure context → ViewController"))
    #expect(result.stdout.contains("leakViewController()"))
    #expect(result.stdout.contains("leakWeaklyObservedSession()"))
  }

  @Test func aProgramUsingFoundationAndDispatchLeaksNothing() throws {
    let (trace, result) = try record("foundation")
    #expect(result.status == 0)
    #expect(result.stdout.hasSuffix("check 0: 0 lost, 0 possibly lost\n"))
    // Neither the check in the middle nor the one at exit finds anything
    for scan in [UInt64(1), 2] {
      let report = try LeakReport.read(path: trace.path, scan: scan, symbolizer: nil)
      #expect(report.groups.isEmpty, "scan \(scan): \(report.groups.map(\.name))")
    }
    #expect(try Harness.heapline(["leaks", trace.path]).status == 0)
  }

  /// An array's storage keeps elements in the slack that malloc gave beyond what it asked for:
  /// the scan reads it, and the seventh array is not taken for lost.
  @Test func whatArraysKeepInMallocsSlackIsReached() throws {
    let (trace, result) = try record("slack")
    #expect(result.status == 0)
    #expect(result.stdout == "arrays 7, storage 7\n")
    let report = try LeakReport.read(path: trace.path, scan: nil, symbolizer: nil)
    #expect(report.groups.isEmpty, "\(report.groups.map(\.name))")
    #expect(try Harness.heapline(["leaks", trace.path]).status == 0)
  }

  @Test func scansWhileThreadsRunFindTheSameLeakEveryTime() throws {
    // Given a program that leaks one cycle, then runs three threads that make and drop objects
    // for 0.6 s, sends itself the leak signal meanwhile, and is scanned every 50 ms
    let (trace, result) = try record("threads", ["--leaks-every", "0.05", "--leaks-signal", "30"])
    #expect(result.status == 0)
    let reader = try TraceReader(path: trace.path)
    var stream = reader.events()
    try stream.drainMetadata()
    let scans = stream.metadata.leakScans.values.sorted { $0.id < $1.id }
    // Then there are timer scans (12 fit in 0.6 s; a machine busy with other work stretches
    // each stop of the threads, and once let only 3 happen), one on the signal, one at exit
    #expect(scans.filter { $0.trigger == .timer }.count >= 2)
    #expect(scans.filter { $0.trigger == .signal }.count == 1)
    #expect(scans.last?.trigger == .exit)
    // And every one of them finds exactly the leaked cycle
    for scan in scans {
      let report = LeakReport(
        scan: scan, metadata: stream.metadata, path: trace.path, symbolizer: nil)
      #expect(scan.isComplete)
      #expect(
        report.groups.map(\.name) == ["ViewController → Store → closure context → ViewController"],
        "scan \(scan.id) (\(scan.trigger))")
      #expect(report.definitelyLost == LeakAmount(blocks: 3, bytes: 600), "scan \(scan.id)")
      #expect(report.possiblyLost == LeakAmount(), "scan \(scan.id)")
    }
  }
}
