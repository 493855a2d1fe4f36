import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Heapline's leak verdicts against memcheck's, and its allocation counts against heaptrack's,
/// on the same programs: a C, a C++ and a Swift program with known leaks, blocks held only
/// through a mapping the program made, and a dlopen (Fixtures/referee.c, referee.cpp,
/// Tests/LeakFixture/Referee.swift); and CPython with pymalloc. The README's "Heapline beside
/// memcheck and heaptrack" lists the differences that the tests allow for.
@Suite struct RefereeTests {
  /// libstdc++ allocates its exception emergency pool when it is loaded. A C program loads it
  /// only under heaptrack, whose preload library is C++: one more allocation, of this size.
  static let emergencyPool: UInt64 = 72_704

  func compile(_ source: String, compiler: String, in dir: URL) throws -> String {
    let output = dir.appendingPathComponent(source).path
    let path = Harness.fixtures.appendingPathComponent(source).path
    let result = try Referees.run("/usr/bin/env", [compiler, "-g", "-O0", "-o", output, path])
    guard result.status == 0 else { throw HarnessError("\(compiler): \(result.stderr)") }
    return output
  }

  /// Compiles a fixture and runs it under the three tools; memcheck and Heapline must both
  /// find the ground truth, with no possibly lost blocks, and heaptrack the allocations and
  /// peak that Heapline saw, plus `heaptrackAlone` (what only heaptrack's preload made).
  func expectAgreement(
    _ source: String, compiler: String, definitely: LeakAmount, indirectly: LeakAmount,
    heaptrackAlone: LeakAmount
  ) throws {
    let dir = try Harness.temporaryDirectory()
    let program = try compile(source, compiler: compiler, in: dir)
    let heapline = try Referees.heapline(program, in: dir)
    let memcheck = try Referees.memcheck(program)
    let heaptrack = try Referees.heaptrack(program, in: dir)
    #expect(heapline.report.definitelyLost == definitely)
    #expect(heapline.report.indirectlyLost == indirectly)
    #expect(heapline.report.possiblyLost == LeakAmount())
    #expect(memcheck.definitelyLost == definitely)
    #expect(memcheck.indirectlyLost == indirectly)
    #expect(memcheck.possiblyLost == LeakAmount())
    #expect(heapline.leaksStatus == 1)
    #expect(heapline.report.groups.allSatisfy { $0.kind == .rootLeak })
    // The loader's blocks from dlopen are suppressed by default, and said to be
    #expect(heapline.report.suppressedByDefault.map(\.suppression.name) == ["loader"])
    let totals = heapline.statistics.totals
    #expect(heaptrack.allocations == totals.allocationCount + heaptrackAlone.blocks)
    #expect(heaptrack.peakBytes == totals.peakLiveBytes + heaptrackAlone.bytes)
  }

  @Test func cVerdictsMatchMemcheckAndCountsMatchHeaptrack() throws {
    // Ground truth: 7 blocks of 56 B, and a list of 5 × 72 B whose head is lost; the 10 blocks
    // held only from the program's own mapping are reachable. heaptrack also sees libstdc++'s
    // pool, which its own preload library brings
    try expectAgreement(
      "referee.c", compiler: "cc", definitely: LeakAmount(blocks: 8, bytes: 7 * 56 + 72),
      indirectly: LeakAmount(blocks: 4, bytes: 4 * 72),
      heaptrackAlone: LeakAmount(blocks: 1, bytes: Self.emergencyPool))
  }

  @Test func cppVerdictsMatchMemcheckAndCountsMatchHeaptrack() throws {
    // Ground truth: 6 Widgets of 48 B and a vector object of 24 B lost, its 80 B of ints
    // hanging from it; the 4 Widgets held from the program's mapping are reachable, and so is
    // an object held through its second base (possibly lost before memcheck's heuristics were
    // Heapline's). The program loads libstdc++ itself: both tracers see its pool
    try expectAgreement(
      "referee.cpp", compiler: "clang++", definitely: LeakAmount(blocks: 7, bytes: 6 * 48 + 24),
      indirectly: LeakAmount(blocks: 1, bytes: 20 * 4), heaptrackAlone: LeakAmount())
  }

  @Test func swiftVerdictsMatchMemcheckAndCountsMatchHeaptrack() throws {
    let dir = try Harness.temporaryDirectory()
    let program = LeakSwiftTests.fixture
    let heapline = try Referees.heapline(program, ["referee"], in: dir)
    let memcheck = try Referees.memcheck(program, ["referee"])
    let heaptrack = try Referees.heaptrack(program, ["referee"], in: dir)
    // Ground truth: 3 cycles of two 56-byte nodes; the 5 nodes retained only from the
    // program's mapping are reachable. memcheck calls one node of each cycle definitely lost
    // and the other indirectly; Heapline calls a cycle that nothing points into definitely lost
    let lost = LeakAmount(blocks: 6, bytes: 6 * 56)
    #expect(heapline.report.definitelyLost == lost)
    #expect(heapline.report.indirectlyLost == LeakAmount())
    #expect(heapline.report.groups.map(\.name) == ["RefereeNode → RefereeNode → RefereeNode"])
    let memcheckLost = LeakAmount(
      blocks: memcheck.definitelyLost.blocks + memcheck.indirectlyLost.blocks,
      bytes: memcheck.definitelyLost.bytes + memcheck.indirectlyLost.bytes)
    #expect(memcheckLost == lost)
    #expect(heapline.leaksStatus == 1)
    #expect(heaptrack.allocations == heapline.statistics.totals.allocationCount)
    #expect(heaptrack.peakBytes == heapline.statistics.totals.peakLiveBytes)
  }

  @Test func cpythonWithPymallocLeaksNothingAndPasses() throws {
    // Given a script whose objects live in pymalloc's arenas, anonymous mappings that hold the
    // only pointers to some malloc blocks (and a dlopen, for the json module's C part)
    let dir = try Harness.temporaryDirectory()
    let script = dir.appendingPathComponent("objects.py")
    try """
    import json
    table = {str(i): [i, str(i) * 3, {"n": i}] for i in range(3000)}
    print(len(json.dumps(table)))
    """.write(to: script, atomically: true, encoding: .utf8)
    // The interpreter itself, not a wrapper script (pyenv's), for memcheck to trace
    let python = try Referees.run(
      "/usr/bin/env", ["python3", "-c", "import sys; print(sys.executable)"])
    let executable = python.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    let heapline = try Referees.heapline(executable, [script.path], in: dir)
    let memcheck = try Referees.memcheck(executable, [script.path])
    #expect(heapline.report.definitelyLost == LeakAmount())
    #expect(heapline.report.indirectlyLost == LeakAmount())
    #expect(memcheck.definitelyLost == LeakAmount())
    #expect(heapline.leaksStatus == 0)
  }
}
