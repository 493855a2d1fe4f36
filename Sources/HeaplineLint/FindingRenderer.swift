import Foundation

extension LintFinding {
  /// The findings as `heapline lint --format json` writes them: an array of objects with the
  /// keys `file`, `line`, `column`, `kind`, `target` and `message`, and a final newline.
  public static func json(_ findings: [LintFinding]) -> String {
    let objects = findings.map { finding -> [String: Any] in
      [
        "file": finding.file, "line": finding.line, "column": finding.column,
        "kind": finding.kind.rawValue, "target": finding.target, "message": finding.message,
      ]
    }
    let options: JSONSerialization.WritingOptions = [
      .prettyPrinted, .sortedKeys, .withoutEscapingSlashes,
    ]
    let data = (try? JSONSerialization.data(withJSONObject: objects, options: options)) ?? Data()
    return String(decoding: data, as: UTF8.self) + "\n"
  }
}
