/// Parses `llvm-symbolizer` output in its default (LLVM) style.
///
/// Each input address yields one block: a function line and a `file:line:column` line,
/// repeated for each inlined frame, then a blank line. `??` stands for unknown.
///
/// ```
/// $s4main4leafyyF
/// /src/main.swift:3:5
/// $s4main3midyyF
/// /src/main.swift:7:3
///
/// ```
enum SymbolizerOutput {
  /// One function/location pair of a block.
  struct Entry: Hashable {
    var function: String?
    var file: String?
    var line: Int?
    var column: Int?

    /// Whether the tool knew anything of the address: a function or a file (`??` is neither).
    var isKnown: Bool { function != nil || file != nil }
  }

  /// The blocks of `text`, one per input address, in input order.
  static func parse(_ text: String) -> [[Entry]] {
    var blocks: [[Entry]] = []
    var lines: [Substring] = []
    for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
      if line.isEmpty {
        if !lines.isEmpty { blocks.append(entries(lines)) }
        lines.removeAll()
      } else {
        lines.append(line)
      }
    }
    if !lines.isEmpty { blocks.append(entries(lines)) }
    return blocks
  }

  private static func entries(_ lines: [Substring]) -> [Entry] {
    stride(from: 0, to: lines.count, by: 2).map { index in
      var entry = Entry()
      let function = lines[index]
      entry.function = function == "??" ? nil : String(function)
      if index + 1 < lines.count { parseLocation(lines[index + 1], into: &entry) }
      return entry
    }
  }

  /// Splits `path:line:column` (or `path:line`) from the right, since paths may hold colons.
  private static func parseLocation(_ text: Substring, into entry: inout Entry) {
    var parts = text.split(separator: ":", omittingEmptySubsequences: false)
    var numbers: [Int] = []
    while numbers.count < 2, parts.count > 1, let last = parts.last, let number = Int(last) {
      numbers.insert(number, at: 0)
      parts.removeLast()
    }
    let file = parts.joined(separator: ":")
    // Line 0 means no line table covers the address: the file is then only the name of some
    // compilation unit (`crtstuff.c`, `Swift.o` in the toolchain's libraries), which misleads.
    guard let line = numbers.first, line > 0, !file.isEmpty, file != "??" else { return }
    // Thunks that Swift synthesizes claim a pseudo-file, which helps no one find the code.
    guard !file.hasSuffix("<compiler-generated>") else { return }
    entry.file = file
    entry.line = line
    if numbers.count == 2, numbers[1] > 0 { entry.column = numbers[1] }
  }
}
