/// Why `RetainCycleLint` could not read its input.
public enum LintError: Error, Equatable, CustomStringConvertible {
  /// The path does not exist, or it (or a file under it) cannot be read.
  case unreadable(path: String, reason: String)

  public var description: String {
    switch self {
    case .unreadable(let path, let reason): "cannot read '\(path)': \(reason)"
    }
  }
}
