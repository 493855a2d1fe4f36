import Testing

/// A usage error of `heapline SUBCOMMAND`: exit status 64, the error on the first line, then
/// the subcommand's usage and the --help hint last; nothing on stdout.
func expectUsageError(
  _ result: Harness.Result, mentioning text: String, subcommand: String,
  sourceLocation: SourceLocation = #_sourceLocation
) {
  #expect(result.status == 64, sourceLocation: sourceLocation)
  let lines = result.stderr.split(separator: "\n").map(String.init)
  #expect(
    lines.first?.hasPrefix("heapline: ") == true, "stderr: \(result.stderr)",
    sourceLocation: sourceLocation)
  #expect(
    lines.first?.contains(text) == true, "stderr: \(result.stderr)",
    sourceLocation: sourceLocation)
  #expect(
    lines.contains { $0.hasPrefix("Usage: heapline \(subcommand) ") }, "stderr: \(result.stderr)",
    sourceLocation: sourceLocation)
  #expect(
    lines.last == "  See 'heapline \(subcommand) --help' for more information.",
    sourceLocation: sourceLocation)
  #expect(result.stdout.isEmpty, sourceLocation: sourceLocation)
}
