import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Every source of marks, end to end: the C API, a signal (default or chosen), and a timer.
@Suite struct MarkSourceTests {
  @Test func heaplineMarkFromCWritesNamedMarksInOrder() throws {
    let trace = try PhasesFixture.phases.get().trace
    #expect(try PhasesFixture.marks(trace).map(\.name) == ["begin", "A", "B", "C", "D", "E"])
  }

  // A real-time signal would end a program that had no handler for it, so a mark that was not
  // installed cannot pass unseen.
  @Test(arguments: [("12", SIGUSR2), ("40", 40)] as [(String?, Int32)])
  func aSignalSentToTheProgramWritesAMark(option: String?, signal: Int32) throws {
    // Given the fixture raising the mark signal twice, with 7 blocks of 333 bytes in between
    let options = option.map { ["--mark-signal", $0] } ?? []
    let recording = try PhasesFixture.record(
      ["signal", String(signal)], options: options, name: "signal\(signal)")
    // Then each signal is a mark, and the growth between them is exactly those blocks
    #expect(try PhasesFixture.marks(recording.trace).map(\.name) == ["signal 1", "signal 2"])
    let result = try Harness.heapline([
      "diff", recording.trace, "--from", "signal 1", "--to", "signal 2", "--format", "csv",
    ])
    #expect(result.stdout.hasPrefix("group,name,count,bytes\r\ncategory,Between,7,2331\r\nstack,"))
    #expect(result.stdout.split(separator: "\r\n").count == 3)
  }

  @Test func markEveryWritesATimerMarkAtEachMultipleOfItsPeriod() throws {
    // Given the fixture running for at least 300 ms, with marks every 50 ms
    let recording = try PhasesFixture.record(
      ["every"], options: ["--mark-every", "0.05"], name: "every")
    // Then the marks are numbered, at exact multiples of 50 ms
    let marks = try PhasesFixture.marks(recording.trace)
    #expect(marks.count >= 5)
    #expect(marks.map(\.name) == (1...marks.count).map { "every \($0)" })
    #expect(marks.map(\.time) == (1...marks.count).map { UInt64($0) * 50_000_000 })
    // And the generations between them hold the ticks, all live at the end
    let generations = try Generation.all(in: TraceReader(path: recording.trace))
    #expect(generations.count == marks.count + 1)
    #expect(generations.compactMap { $0.category(named: "Ticks")?.count }.reduce(0, +) == 30)
  }
}
