import HeaplineTrace

/// The blocks of one allocating stack that a ``Growth`` holds.
public struct StackGrowth: Hashable, Sendable {
  /// The stack's id in the trace.
  public var id: StackID
  /// Its return addresses, innermost first.
  public var frames: [UInt64]
  /// Blocks.
  public var count: UInt64
  /// Bytes.
  public var bytes: UInt64

  /// Creates a stack's figures.
  public init(id: StackID, frames: [UInt64], count: UInt64, bytes: UInt64) {
    self.id = id
    self.frames = frames
    self.count = count
    self.bytes = bytes
  }
}
