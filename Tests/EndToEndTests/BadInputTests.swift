import Foundation
import Testing

/// Bad input gets one clear line on stderr and exit status 2, never a crash.
@Suite struct BadInputTests {
  func expectOneLineError(_ result: Harness.Result, mentioning text: String) {
    #expect(result.status == 2)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "stderr: \(result.stderr)")
    #expect(result.stderr.hasPrefix("heapline: "))
    #expect(result.stderr.contains(text), "stderr: \(result.stderr)")
  }

  @Test func anUnknownProgramIsAnError() throws {
    let result = try Harness.heapline(["record", "--", "no-such-program-heapline"])
    expectOneLineError(result, mentioning: "not found")
  }

  @Test func anUnwritableOutputPathIsAnError() throws {
    let result = try Harness.heapline(["record", "-o", "/nonexistent/dir/x.trace", "--", "true"])
    expectOneLineError(result, mentioning: "/nonexistent/dir/x.trace")
  }

  @Test func anUnknownFlagIsAnError() throws {
    expectOneLineError(
      try Harness.heapline(["report", "x.trace", "--bogus"]), mentioning: "--bogus")
    expectOneLineError(
      try Harness.heapline(["record", "--depth", "0", "--", "true"]), mentioning: "depth")
  }

  @Test func anUnknownRecordOptionIsAnErrorAndHelpIsHelp() throws {
    expectOneLineError(
      try Harness.heapline(["record", "--bogus", "--", "true"]), mentioning: "--bogus")
    let help = try Harness.heapline(["record", "--help"])
    #expect(help.status == 0)
    #expect(help.stdout.contains("USAGE: heapline record"))
  }

  @Test func aMissingTraceIsAnError() throws {
    expectOneLineError(
      try Harness.heapline(["report", "/nonexistent.trace"]), mentioning: "/nonexistent.trace")
  }

  @Test func aTraceCutInItsFirstChunkReadsEmptyWithANoticeNamingTheCut() throws {
    // Given a real trace cut 10 bytes into its first chunk's payload
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("cut.trace")
    _ = try Harness.heapline(["record", "-o", trace.path, "--", program, "100", "48", "0", "0"])
    let data = try Data(contentsOf: trace)
    try data.prefix(48 + 48 + 10).write(to: trace)
    // Then the report reads no allocation, and one notice names the 58 bytes left at 48
    let result = try Harness.heapline(["report", trace.path, "--format", "json"])
    #expect(result.status == 0)
    #expect(
      result.stderr
        == "heapline: warning: trace '\(trace.path)' was cut short: 58 bytes of a partial chunk"
        + " at offset 48 were not read (read no complete chunk)\n")
    #expect(result.stdout.contains("\"allocations\": 0,"), "\(result.stdout)")
    #expect(result.stdout.contains("\"cut_short_offset\": 48,"), "\(result.stdout)")
  }

  @Test func aCorruptTraceIsAnErrorThatNamesTheOffset() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("corrupt.trace")
    _ = try Harness.heapline(["record", "-o", trace.path, "--", program, "100", "48", "0", "0"])
    var data = try Data(contentsOf: trace)
    data[48 + 48 + 5] ^= 0xFF  // a byte inside the first chunk's payload
    try data.write(to: trace)
    expectOneLineError(try Harness.heapline(["report", trace.path]), mentioning: "offset 48")
  }

  @Test func aFileThatIsNotATraceIsAnError() throws {
    let dir = try Harness.temporaryDirectory()
    let file = dir.appendingPathComponent("text.trace")
    try Data("hello, world, this is not a trace at all; it is text.\n".utf8).write(to: file)
    expectOneLineError(
      try Harness.heapline(["report", file.path]), mentioning: "not a Heapline trace")
  }
}
