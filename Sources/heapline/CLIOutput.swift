import HeaplineAnalysis

#if canImport(Glibc)
  import Glibc
#endif

/// Messages from the CLI itself. They go to stderr so that a recorded program's stdout and a
/// report's output stay clean.
enum CLIOutput {
  /// One line, whatever the message holds: a path with a newline in it made two, and a message
  /// cut at its first line lost what came after the path.
  static func error(_ message: String) { write("heapline: " + oneLine(ownWords(message))) }
  static func warning(_ message: String) { write("heapline: warning: " + oneLine(message)) }
  static func note(_ message: String) { write("heapline: " + message) }

  /// The argument parser's error line: its message goes on with the usage, on lines of its own.
  static func parserError(_ message: String) { write("heapline: " + firstLine(message)) }

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
    String(ownWords(message).split(separator: "\n", omittingEmptySubsequences: true).first ?? "")
  }

  /// `message` without the argument parser's "Error: ", which "heapline: " stands for.
  private static func ownWords(_ message: String) -> String {
    message.hasPrefix("Error: ") ? String(message.dropFirst(7)) : message
  }

  /// `message` with its control characters written as escapes (`\n`, `\u{1B}`).
  static func oneLine(_ message: String) -> String {
    var line = ""
    for scalar in message.unicodeScalars {
      switch scalar {
      case "\n": line += "\\n"
      case "\t": line += "\\t"
      case "\r": line += "\\r"
      case _ where scalar.value < 0x20 || scalar.value == 0x7F:
        line += "\\u{\(String(scalar.value, radix: 16, uppercase: true))}"
      default: line.unicodeScalars.append(scalar)
      }
    }
    return line
  }

  private static func write(_ line: String) {
    var text = line
    text.append("\n")
    text.withCString { _ = Glibc.write(2, $0, strlen($0)) }
  }
}
