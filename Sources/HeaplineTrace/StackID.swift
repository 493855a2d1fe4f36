/// Names a node of the stack trie: the innermost frame of one distinct call stack.
///
/// ```swift
/// let frames = metadata.frames(of: allocation.stack) // return addresses, innermost first
/// ```
public struct StackID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible {
  /// The id as written in STACK and ALLOC records.
  public var rawValue: UInt64

  /// Wraps a raw stack id.
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// Wraps a raw stack id.
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }

  /// The empty stack, the root of the trie (id 0).
  public static let empty = StackID(0)

  public static func < (lhs: StackID, rhs: StackID) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { "stack \(rawValue)" }
}
