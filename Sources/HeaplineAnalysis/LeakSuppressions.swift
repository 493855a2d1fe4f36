import HeaplineTrace

/// Suppressions for `heapline leaks --suppressions FILE`: leaks to leave out of a report,
/// matched against the symbolized allocation stacks of each group's blocks.
///
/// The file has one suppression per line; blank lines and lines starting with `#` are
/// ignored:
///
/// ```
/// # A cache that lives as long as the process.
/// leak:function=make_cache          the demangled function name of any frame
/// leak:function=*Cache.init*        `*` matches any run of characters, `?` any one
/// leak:module=libfontconfig.so*     the module's file name (or its whole path)
/// leak:file=vendor/*.c              the source file's name (or its whole path)
/// leak:parse_config                 as LeakSanitizer: a function, module or file name
/// ```
///
/// A group is suppressed when any frame of any of its starting blocks' stacks matches any
/// suppression.
public struct LeakSuppressions: Hashable, Sendable {
  /// What part of a frame a suppression matches.
  public enum Field: String, Hashable, Sendable {
    case function, module, file, any
  }

  /// One line of the file.
  public struct Rule: Hashable, Sendable {
    public var field: Field
    public var pattern: String
    /// The line as written, without surrounding space, for reports.
    public var text: String
  }

  public private(set) var rules: [Rule] = []

  /// No suppressions.
  public init() {}

  /// Parses a suppressions file's contents, which must be text.
  ///
  /// - Throws: ``AnalysisError/invalidOption(_:)`` naming the file (`source`) when it is not
  ///   UTF-8 text (a NUL byte, an invalid sequence), or the line of the first malformed
  ///   suppression.
  public init(data: some Collection<UInt8>, source: String) throws(AnalysisError) {
    guard !data.contains(0), let text = String(validating: data, as: UTF8.self) else {
      throw .invalidOption("suppressions '\(source)' is not a text file")
    }
    try self.init(text: text, source: source)
  }

  /// Parses a suppressions file's text.
  ///
  /// - Throws: ``AnalysisError/invalidOption(_:)`` naming the file (`source`) and the line of
  ///   the first malformed suppression.
  public init(text: String, source: String) throws(AnalysisError) {
    for (number, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated()
    {
      let line = raw.trimmingSpaces
      if line.isEmpty || line.hasPrefix("#") { continue }
      func fail(_ why: String) -> AnalysisError {
        .invalidOption(
          "suppressions '\(source)' line \(number + 1): \(why): '\(line.printable(limit: 80))'")
      }
      guard line.hasPrefix("leak:") else { throw fail("a suppression starts with 'leak:'") }
      let body = line.dropFirst(5)
      var field = Field.any
      var pattern = Substring(body)
      if let equals = body.firstIndex(of: "=") {
        guard let named = Field(rawValue: String(body[..<equals])), named != .any else {
          throw fail("the field must be function, module or file")
        }
        field = named
        pattern = body[body.index(after: equals)...]
      }
      guard !pattern.isEmpty else { throw fail("the pattern is empty") }
      rules.append(Rule(field: field, pattern: String(pattern), text: String(line)))
    }
  }

  /// The first rule that matches one of `frames`, as written; `nil` when none does.
  public func match(_ frames: [SymbolizedFrame]) -> String? {
    for rule in rules {
      for frame in frames where rule.matches(frame) { return rule.text }
    }
    return nil
  }
}

extension LeakSuppressions.Rule {
  func matches(_ frame: SymbolizedFrame) -> Bool {
    let function = frame.function.map { [$0] } ?? []
    let module = [frame.moduleName, frame.modulePath].compactMap { $0 }
    let file =
      frame.file.map { [($0.split(separator: "/").last.map(String.init) ?? $0), $0] } ?? []
    let candidates: [String]
    switch field {
    case .function: candidates = function
    case .module: candidates = module
    case .file: candidates = file
    case .any: candidates = function + module + file
    }
    return candidates.contains { Glob.matches(pattern: Array(pattern.utf8), text: Array($0.utf8)) }
  }
}

/// `*` and `?` wildcards, matched against a whole name, without backtracking blow-up.
enum Glob {
  static func matches(pattern: [UInt8], text: [UInt8]) -> Bool {
    var p = 0
    var t = 0
    var star: Int?
    var resume = 0
    while t < text.count {
      if p < pattern.count && (pattern[p] == UInt8(ascii: "?") || pattern[p] == text[t]) {
        p += 1
        t += 1
      } else if p < pattern.count && pattern[p] == UInt8(ascii: "*") {
        star = p
        p += 1
        resume = t
      } else if let starAt = star {
        p = starAt + 1
        resume += 1
        t = resume
      } else {
        return false
      }
    }
    while p < pattern.count && pattern[p] == UInt8(ascii: "*") { p += 1 }
    return p == pattern.count
  }
}

extension Substring {
  /// Control characters escaped (`\u{1B}`), and cut at `limit` characters: for a one-line
  /// message.
  fileprivate func printable(limit: Int) -> String {
    var out = ""
    for (index, character) in enumerated() {
      if index == limit { return out + "…" }
      let isControl = character.unicodeScalars.contains {
        $0.properties.generalCategory == .control || $0.properties.generalCategory == .format
          || $0 == "\u{2028}" || $0 == "\u{2029}"
      }
      out +=
        isControl
        ? character.unicodeScalars.map { $0.escaped(asASCII: true) }.joined() : String(character)
    }
    return out
  }

  /// Without spaces, tabs and carriage returns at either end.
  fileprivate var trimmingSpaces: Substring {
    let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
    guard let first = firstIndex(where: { !isSpace($0) }),
      let last = lastIndex(where: { !isSpace($0) })
    else { return "" }
    return self[first...last]
  }
}
