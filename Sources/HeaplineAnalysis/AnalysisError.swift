import HeaplineTrace

#if canImport(Foundation)
  import Foundation
#endif

/// The one error type of HeaplineAnalysis: an analysis that cannot run on the trace or the
/// options it was given.
///
/// Its description is one line, ready for `heapline: <description>` on stderr:
///
/// ```
/// no mark named 'after load' in 'app.trace' (its marks: 'A', 'B', 'signal 1')
/// ```
public enum AnalysisError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The trace cannot be read.
  case trace(TraceError)
  /// A mark that the trace does not hold: the name asked for, the trace's path, and the names
  /// of the marks it does hold.
  case unknownMark(String, path: String, known: [String])
  /// `from` comes after `to` in the trace, so nothing can have been allocated between them.
  case marksOutOfOrder(from: String, to: String)
  /// A category that no allocation of the trace has.
  case unknownCategory(String, path: String)
  /// A time step that is not a whole positive number of nanoseconds.
  case invalidInterval(String)
  /// A count or limit out of range: what, and why.
  case invalidOption(String)
  /// Writing output (or a temporary file) failed: the path, and the system's message.
  case outputFailed(path: String, String)

  public var description: String {
    switch self {
    case .trace(let error):
      return error.description
    case .unknownMark(let name, let path, let known):
      let list = known.isEmpty ? "it has no marks" : "its marks: " + Self.quotedList(known)
      return "no mark named '\(name)' in '\(path)' (\(list); or use start and end)"
    case .marksOutOfOrder(let from, let to):
      return "mark '\(from)' comes after mark '\(to)': give the earlier one as --from"
    case .unknownCategory(let name, let path):
      return "no allocation of '\(path)' is in a category named '\(name)'"
    case .invalidInterval(let detail):
      return "invalid interval: \(detail)"
    case .invalidOption(let detail):
      return detail
    case .outputFailed(let path, let message):
      return "cannot write '\(path)': \(message)"
    }
  }

  /// At most ten names, quoted, so a trace with thousands of timer marks stays one short line.
  private static func quotedList(_ names: [String]) -> String {
    let shown = names.prefix(10).map { "'\($0)'" }.joined(separator: ", ")
    return names.count > 10 ? shown + ", … (\(names.count) in all)" : shown
  }
}

#if canImport(Foundation)
  extension AnalysisError: LocalizedError {
    /// The same one line as ``description``.
    public var errorDescription: String? { description }
  }
#endif
