import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// `heapline leaks` as a CI gate: status 1 only for definitely or indirectly lost blocks left
/// after suppressions, possibly lost ones only with `--fail-on possibly`, and the runtimes' own
/// blocks suppressed by default, counted, and shown again with `--no-default-suppressions`.
@Suite struct LeakExitStatusTests {
  /// Fixtures/referee.c in its clean mode: it loses nothing, keeps a block of 120 B through a
  /// pointer into its middle, and loads a library with dlopen, after which ld.so keeps a block
  /// that only pointers into its middle reach (a `_dlfo_mappings_segment_allocate` segment).
  func recordClean() throws -> String {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("referee", in: dir)
    let trace = dir.appendingPathComponent("clean.trace").path
    let record = try Referees.run(
      Harness.heapline, ["record", "-o", trace, "--", program, "clean"])
    #expect(record.status == 0)
    return trace
  }

  @Test func theLoadersBlocksAreSuppressedByDefaultAndCounted() throws {
    let trace = try recordClean()
    let shown = try LeakReport.read(
      path: trace, defaultSuppressions: false, symbolizer: Symbolizer())
    let suppressed = try LeakReport.read(path: trace, symbolizer: Symbolizer())
    // Without default suppressions: the program's block and the loader's, possibly lost
    let loader = shown.groups.filter { group in
      group.members.allSatisfy { member in
        member.frames.contains { $0.function == "_dlfo_mappings_segment_allocate" }
      }
    }
    #expect(loader.count == 1)
    #expect(loader.first?.kind == .possiblyLost)
    #expect(shown.groups.count == 2)
    #expect(shown.definitelyLost == LeakAmount())
    // With them: only the program's block is left; the loader's are counted under "loader"
    let programs = LeakAmount(blocks: 1, bytes: 120)
    #expect(suppressed.groups.count == 1)
    #expect(suppressed.possiblyLost == programs)
    #expect(suppressed.suppressedByDefault.count == 1)
    let count = try #require(suppressed.suppressedByDefault.first)
    #expect(count.suppression.name == "loader")
    #expect(count.amount.blocks == shown.possiblyLost.blocks - 1)
    #expect(count.amount.bytes == shown.possiblyLost.bytes - 120)
    #expect(count.groups == 1)
    // The text and JSON reports say so
    let text = try Referees.run(Harness.heapline, ["leaks", trace])
    #expect(text.status == 0, "stdout: \(text.stdout)")
    #expect(text.stdout.contains("Suppressed by default (--no-default-suppressions shows them):"))
    let bytes = count.amount.bytes.formatted(
      .number.grouping(.automatic).locale(Locale(identifier: "en_US")))
    let blocks = "\(count.amount.blocks) block\(count.amount.blocks == 1 ? "" : "s")"
    #expect(text.stdout.contains("  loader: \(blocks) (\(bytes) B) in \(count.groups) group"))
    let json = try Referees.run(Harness.heapline, ["leaks", trace, "--format", "json"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
    let rules = try #require(object["suppressed_by_default"] as? [[String: Any]])
    #expect(rules.count == 1)
    #expect(rules.first?["name"] as? String == "loader")
    #expect(rules.first?["bytes"] as? UInt64 == count.amount.bytes)
    #expect(rules.first?["blocks"] as? UInt64 == count.amount.blocks)
  }

  @Test func possiblyLostBlocksFailOnlyWithFailOnPossibly() throws {
    let trace = try recordClean()
    // Only a possibly lost block: listed, and status 0, unless asked
    let listed = try Referees.run(Harness.heapline, ["leaks", trace])
    #expect(listed.status == 0)
    #expect(listed.stdout.contains("Possibly lost: Malloc 128 Bytes\n"))
    #expect(listed.stdout.contains("1 leak: 1 block (120 B) possibly lost"))
    let strict = try Referees.run(Harness.heapline, ["leaks", trace, "--fail-on", "possibly"])
    #expect(strict.status == 1)
    // Blocks suppressed by default fail nothing, even then: a suppression file takes the
    // program's block away, and what is left is the loader's
    let dir = URL(fileURLWithPath: trace).deletingLastPathComponent()
    let rules = dir.appendingPathComponent("interior.supp")
    try "leak:function=keep_interior\n".write(to: rules, atomically: true, encoding: .utf8)
    let gated = try Referees.run(
      Harness.heapline, ["leaks", trace, "--fail-on", "possibly", "--suppressions", rules.path])
    #expect(gated.status == 0)
    #expect(gated.stdout.contains("No leaks left once suppressions are applied."))
    let ungated = try Referees.run(
      Harness.heapline,
      [
        "leaks", trace, "--fail-on", "possibly", "--suppressions", rules.path,
        "--no-default-suppressions",
      ])
    #expect(ungated.status == 1)
  }

  @Test func anUnknownFailOnValueIsAUsageError() throws {
    let trace = try recordClean()
    let result = try Referees.run(Harness.heapline, ["leaks", trace, "--fail-on", "maybe"])
    // A usage error, as every command's: 64, the one-line reason first, then the usage line
    #expect(result.status == 64)
    let lines = result.stderr.split(separator: "\n").map(String.init)
    let reason =
      "heapline: The value 'maybe' is invalid for '--fail-on <kind>'. Please provide one of"
      + " 'definitely' and 'possibly'."
    #expect(lines.first == reason)
    #expect(lines.contains { $0.hasPrefix("Usage: heapline leaks") })
    #expect(lines.last?.contains("See 'heapline leaks --help'") == true)
  }

  @Test func aBinarySuppressionsFileIsAOneLineError() throws {
    let trace = try recordClean()
    let result = try Referees.run(
      Harness.heapline, ["leaks", trace, "--suppressions", "/bin/true"])
    #expect(result.status == 2)
    #expect(result.stderr == "heapline: suppressions '/bin/true' is not a text file\n")
  }
}
