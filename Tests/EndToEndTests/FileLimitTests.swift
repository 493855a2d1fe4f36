import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `record` under a low limit on descriptors (`ulimit -n`), with no symbol cache, so that the
/// symbolizer runs at the recording's end.
@Suite struct FileLimitTests {
  @Test(arguments: ["-Sn", "-n"])
  func aRecordingUnderALowDescriptorLimitEndsWithItsTraceAndTheProgramsLimit(flag: String) throws {
    // Given a program recorded under `ulimit -n 12` (soft and hard) or `ulimit -Sn 12`: starting
    // the symbolizer at its end trapped in Foundation's Process, and record died of SIGILL (132)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("showlimit", in: dir)
    let trace = dir.appendingPathComponent("limit.trace").path
    let result = try Harness.run(
      "/bin/sh",
      [
        "-c", "ulimit \(flag) 12 && exec \"$0\" record -o \"$1\" -- \"$2\"",
        Harness.heapline, trace, program,
      ], environment: ["HEAPLINE_SYMBOL_CACHE": ""])
    // Then record ends as the program did, the program had the limit it was given, and with a
    // soft limit the command raised its own to run the symbolizer; under a hard one it says
    // that the frames stay offsets
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "limit 12\n")
    let tooFew = "too few descriptors left to run"
    #expect(result.stderr.contains(tooFew) == (flag == "-n"), "\(result.stderr)")
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.trace.isComplete)
  }

  @Test func recordWithoutTheDescriptorsToStartTheProgramIs125NotCannotRun() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("endings", in: dir)
    let trace = dir.appendingPathComponent("t.trace").path
    // Under a hard limit of 5 descriptors, record has none left for its pipe to the child
    let result = try Harness.run(
      "/bin/sh",
      [
        "-c", "ulimit -n 5; exec \"$0\" record -o \"$1\" -- \"$2\" exit",
        Harness.heapline, trace, program,
      ])
    #expect(result.status == 125)
    #expect(
      result.stderr == "heapline: cannot start a process for '\(program)': Too many open files\n")
  }
}
