import Foundation
import Testing

/// The analysis subcommands: `--help` works; a bad option value is a usage error (64, with the
/// usage), and bad input (a trace, a mark) gets one line and exit status 2.
@Suite struct AnalysisCommandInputTests {
  func expectOneLineError(_ arguments: [String], mentioning text: String) throws {
    let result = try Harness.heapline(arguments)
    #expect(result.status == 2, "\(arguments)")
    #expect(result.stderr.split(separator: "\n").count == 1, "\(arguments): \(result.stderr)")
    #expect(result.stderr.hasPrefix("heapline: "), "\(arguments)")
    #expect(result.stderr.contains(text), "\(arguments): \(result.stderr)")
    #expect(result.stdout.isEmpty, "\(arguments)")
  }

  func expectUsageError(_ arguments: [String], mentioning text: String) throws {
    let result = try Harness.heapline(arguments)
    EndToEndTests.expectUsageError(result, mentioning: text, subcommand: arguments[0])
  }

  @Test(arguments: ["timeline", "objects", "diff", "export", "report"])
  func helpDescribesTheSubcommand(subcommand: String) throws {
    let result = try Harness.heapline([subcommand, "--help"])
    #expect(result.status == 0)
    #expect(result.stdout.contains("USAGE: heapline \(subcommand)"))
  }

  @Test func theTopLevelHelpListsTheSubcommands() throws {
    let help = try Harness.heapline(["--help"]).stdout
    for subcommand in ["timeline", "objects", "diff", "export"] {
      #expect(help.contains("  \(subcommand) "), "\(subcommand)")
    }
  }

  @Test func badTimelineInput() throws {
    let trace = try PhasesFixture.phases.get().trace
    try expectUsageError(["timeline", trace, "--interval", "0"], mentioning: "--interval")
    try expectUsageError(["timeline", trace, "--interval", "-5"], mentioning: "--interval")
    try expectUsageError(["timeline", trace, "--interval", "soon"], mentioning: "soon")
    try expectUsageError(["timeline", trace, "--by", "stack"], mentioning: "stack")
    try expectUsageError(["timeline", trace, "--categories", "-1"], mentioning: "--categories")
    try expectOneLineError(["timeline", "/nonexistent.trace"], mentioning: "/nonexistent.trace")
    try expectOneLineError(
      ["timeline", trace, "-o", "/nonexistent/dir/t.csv"], mentioning: "/nonexistent/dir/t.csv")
  }

  @Test func badDiffInput() throws {
    let trace = try PhasesFixture.phases.get().trace
    try expectOneLineError(
      ["diff", trace, "--from", "Z", "--to", "B"], mentioning: "no mark named 'Z'")
    try expectOneLineError(["diff", trace, "--from", "A", "--to", "Z"], mentioning: "'begin', 'A'")
    try expectOneLineError(["diff", trace, "--from", "B", "--to", "A"], mentioning: "comes after")
    try expectUsageError(["diff"], mentioning: "one trace")
    try expectUsageError(["diff", trace, trace, trace], mentioning: "not 3")
    try expectUsageError(["diff", trace, trace, "--from", "A"], mentioning: "--from")
    try expectUsageError(["diff", trace, "--top", "-1"], mentioning: "--top")
  }

  @Test func badObjectsInput() throws {
    let trace = try PhasesFixture.phases.get().trace
    try expectUsageError(["objects", trace, "--live-at", "-1"], mentioning: "--live-at")
    try expectOneLineError(["objects", trace, "--category", "Nope"], mentioning: "'Nope'")
  }

  @Test func badExportInput() throws {
    let trace = try PhasesFixture.phases.get().trace
    try expectUsageError(["export", trace], mentioning: "--format")
    try expectUsageError(["export", trace, "--format", "svg"], mentioning: "svg")
    try expectUsageError(
      ["export", trace, "--format", "folded", "--weight", "heavy"], mentioning: "heavy")
  }

  @Test func badReportTime() throws {
    let trace = try PhasesFixture.phases.get().trace
    try expectUsageError(["report", trace, "--at", "-1"], mentioning: "--at")
  }
}
