import HeaplineAnalysis

#if canImport(Glibc)
  import Glibc
#endif

/// Messages from the CLI itself. They go to stderr so that a recorded program's stdout and a
/// report's output stay clean.
enum CLIOutput {
  static func error(_ message: String) { write("heapline: " + firstLine(message)) }
  static func warning(_ message: String) { write("heapline: warning: " + firstLine(message)) }
  static func note(_ message: String) { write("heapline: " + message) }

  /// Writes a command's whole text result to standard output. A write that fails (a full disk,
  /// a closed pipe) is the command's error, as it is for the outputs that are streamed, never a
  /// silent success; standard output that is one of the `inputs` is refused.
  static func result(_ text: String, inputs: [String] = []) throws(AnalysisError) {
    var output = try FileOutput(path: nil, inputs: inputs)
    try output.write(text)
    try output.close()
  }

  /// The usage lines and the --help hint of an argument parser's message, after its error line.
  static func usage(_ message: String) {
    let lines = message.split(separator: "\n", omittingEmptySubsequences: true).dropFirst()
    for line in lines { write(String(line)) }
  }

  private static func firstLine(_ message: String) -> String {
    let trimmed = message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
    return String(trimmed.split(separator: "\n", omittingEmptySubsequences: true).first ?? "")
  }

  private static func write(_ line: String) {
    var text = line
    text.append("\n")
    text.withCString { _ = Glibc.write(2, $0, strlen($0)) }
  }
}
