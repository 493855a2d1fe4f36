import Foundation
import Testing

/// Bad input gets one clear line on stderr and a non-zero exit status, never a crash: 2 for a
/// bad trace, 64 for a usage error (with the usage after the error line), and `record`'s own
/// statuses (125, 126, 127) as `env` has them.
@Suite struct BadInputTests {
  func expectOneLineError(_ result: Harness.Result, mentioning text: String, status: Int32 = 2) {
    #expect(result.status == status)
    let lines = result.stderr.split(separator: "\n")
    #expect(lines.count == 1, "stderr: \(result.stderr)")
    #expect(result.stderr.hasPrefix("heapline: "))
    #expect(result.stderr.contains(text), "stderr: \(result.stderr)")
  }

  @Test func anUnknownProgramIsAnError() throws {
    let result = try Harness.heapline(["record", "--", "no-such-program-heapline"])
    expectOneLineError(result, mentioning: "not found", status: 127)
  }

  @Test func aNameWithANewlineInItIsNamedWholeInOneLine() throws {
    // Given a program and a trace whose names hold a newline (the message was cut at it:
    // "heapline: program './no")
    let program = try Harness.heapline(["record", "--", "./no\nsuch"])
    expectOneLineError(program, mentioning: "program './no\\nsuch' not found", status: 127)
    let trace = try Harness.heapline(["report", "no\nsuch.trace"])
    expectOneLineError(trace, mentioning: "'no\\nsuch.trace': No such file", status: 2)
  }

  @Test func anEmptyOutputNameIsAUsageErrorOfEveryCommand() throws {
    // Given -o "" (four commands said "cannot write ''" with status 2, two a usage error, and
    // record that the current directory was a directory, with 125)
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("t.trace").path
    _ = try Harness.heapline(["record", "-o", trace, "--", "true"])
    for (subcommand, rest) in [
      ("timeline", [trace]), ("objects", [trace]), ("diff", [trace, trace]),
      ("export", [trace, "--format", "folded"]), ("merge", [trace]), ("record", ["--", "true"]),
    ] {
      expectUsageError(
        try Harness.heapline([subcommand, "-o", ""] + rest), mentioning: "-o needs a file name",
        subcommand: subcommand)
    }
  }

  @Test func anUnwritableOutputPathIsAnError() throws {
    let result = try Harness.heapline(["record", "-o", "/nonexistent/dir/x.trace", "--", "true"])
    expectOneLineError(result, mentioning: "/nonexistent/dir/x.trace", status: 125)
  }

  @Test func anUnknownFlagIsAUsageErrorOfItsSubcommand() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("t.trace").path
    _ = try Harness.heapline(["record", "-o", trace, "--", "true"])
    for subcommand in ["report", "timeline", "objects", "diff", "export", "leaks"] {
      let required = subcommand == "export" ? ["--format", "folded"] : []
      expectUsageError(
        try Harness.heapline([subcommand, trace, "--bogus"] + required), mentioning: "--bogus",
        subcommand: subcommand)
    }
    expectUsageError(
      try Harness.heapline(["record", "--depth", "0", "--", "true"]), mentioning: "depth",
      subcommand: "record")
    expectUsageError(
      try Harness.heapline(["timeline", trace, "--interval", "abc"]), mentioning: "abc",
      subcommand: "timeline")
  }

  /// A negative number is the option's value, as getopt takes it, so the error names what is
  /// wrong with it: the parser used to take "-5" for an option and say the value was missing.
  @Test func aNegativeNumberIsTheOptionsValueAndItsErrorSaysWhatIsWrong() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("t.trace").path
    _ = try Harness.heapline(["record", "-o", trace, "--", "true"])
    let cases: [([String], String, String)] = [
      (["record", "--sample-bytes", "-5", "--", "true"], "'-5' is invalid", "record"),
      (["record", "--rotate", "-2", "--", "true"], "not -2", "record"),
      (["record", "--leaks-every", "-1", "--", "true"], "not -1", "record"),
      (["record", "--memory-limit", "-5M", "--", "true"], "not '-5M'", "record"),
      (["report", trace, "--top", "-1"], "not -1", "report"),
      (["timeline", trace, "--interval", "-1"], "not -1", "timeline"),
    ]
    for (arguments, text, subcommand) in cases {
      let result = try Harness.heapline(arguments)
      #expect(!result.stderr.contains("Missing value"), "\(arguments): \(result.stderr)")
      expectUsageError(result, mentioning: text, subcommand: subcommand)
    }
  }

  @Test func anUnknownRecordOptionIsAUsageErrorAndHelpIsHelp() throws {
    expectUsageError(
      try Harness.heapline(["record", "--bogus", "--", "true"]), mentioning: "--bogus",
      subcommand: "record")
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
