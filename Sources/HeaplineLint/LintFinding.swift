/// A closure that `heapline lint` found in a retain cycle with `self`.
///
/// ```swift
/// let findings = try RetainCycleLint.lint(paths: ["Sources"])
/// for finding in findings { print(finding.diagnostic) }
/// // Sources/App/Model.swift:12:20: warning: closure captures 'self' strongly and …
/// ```
public struct LintFinding: Hashable, Sendable, Codable {
  /// How `self` keeps the closure.
  public enum Kind: String, Hashable, Sendable, Codable {
    /// Assigned to a stored property of `self`, or of an object that `self` keeps:
    /// `self.onChange = { self.… }`, `store.onChange = { self.… }`.
    case property
    /// Added to a collection that `self` owns: `handlers.append { self.… }`.
    case collection
    /// Passed to a parameter that a function of the same module stores in its own `self`, on
    /// `self` or on an object that `self` keeps: `button.onTap { self.… }`.
    case parameter
    /// The initial value of a `lazy var`: `lazy var run: () -> Void = { self.… }`.
    case lazy
  }

  /// The file as it was given (a path under a directory argument keeps that prefix).
  public var file: String
  /// The line of the closure's opening brace, from 1.
  public var line: Int
  /// The column of the closure's opening brace, from 1, in UTF-8 bytes as the compiler counts.
  public var column: Int
  public var kind: Kind
  /// Where the closure goes: the property, the collection, or the function and its receiver.
  public var target: String

  public init(file: String, line: Int, column: Int, kind: Kind, target: String) {
    self.file = file
    self.line = line
    self.column = column
    self.kind = kind
    self.target = target
  }

  /// The one-line message, without the location.
  public var message: String {
    let stored =
      switch kind {
      case .property: "is assigned to '\(target)', which 'self' keeps"
      case .collection: "is added to '\(target)', a collection that 'self' owns"
      case .parameter: "is passed to '\(target)', which stores it where 'self' keeps it"
      case .lazy: "is the value of lazy var '\(target)' of 'self'"
      }
    return "closure captures 'self' strongly and \(stored): a retain cycle;"
      + " capture [weak self] or [unowned self]"
  }

  /// The finding in the compiler's format: `file:line:col: warning: message`.
  public var diagnostic: String { "\(file):\(line):\(column): warning: \(message)" }
}
