/// Names an instant of a trace for ``Growth``: its start, its end, or a mark.
///
/// A name that several marks share means the first of them. Memory warnings are not marks
/// here: only generation boundaries (`Heapline.mark(_:)`, `heapline_mark()`, a mark signal,
/// `--mark-every`) are.
///
/// ```swift
/// let from: MarkReference = "after load"   // .named("after load")
/// let to = MarkReference("end")            // .end
/// ```
public enum MarkReference: Hashable, Sendable, ExpressibleByStringLiteral, CustomStringConvertible {
  /// The start of the trace.
  case start
  /// The end of the trace.
  case end
  /// The first mark with this name.
  case named(String)

  /// `start`, `end`, or the name of a mark.
  public init(_ text: String) {
    switch text {
    case "start": self = .start
    case "end": self = .end
    default: self = .named(text)
    }
  }

  public init(stringLiteral value: String) {
    self.init(value)
  }

  /// `start`, `end`, or the mark's name.
  public var description: String {
    switch self {
    case .start: "start"
    case .end: "end"
    case .named(let name): name
    }
  }
}
