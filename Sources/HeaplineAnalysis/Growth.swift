import HeaplineTrace

/// What was allocated between two instants of a trace and is still live at the second: the
/// "abandoned memory" of Instruments' generations, by category and by allocating stack.
///
/// ```swift
/// let growth = try Growth(reader: TraceReader(path: "app.trace"), from: "A", to: "B")
/// growth.bytes                               // 80_000
/// growth.category(named: "Steps")?.count     // 20
/// ```
public struct Growth: Sendable {
  /// Where the extent starts.
  public var from: MarkReference
  /// Where it ends.
  public var to: MarkReference
  /// The start, in nanoseconds since the trace's start.
  public var fromTime: UInt64
  /// The end, in nanoseconds since the trace's start.
  public var toTime: UInt64
  /// Blocks allocated after `from` and still live at `to`.
  public var count: UInt64
  /// Their bytes.
  public var bytes: UInt64
  /// The same blocks by category, most bytes first.
  public var categories: [CategoryGrowth]
  /// The same blocks by allocating stack, most bytes first.
  public var stacks: [StackGrowth]
  /// The trace's module map, for symbolizing ``stacks``.
  public var modules: [TraceModule]

  /// Creates a growth from its parts.
  public init(
    from: MarkReference, to: MarkReference, fromTime: UInt64, toTime: UInt64, count: UInt64,
    bytes: UInt64, categories: [CategoryGrowth], stacks: [StackGrowth], modules: [TraceModule]
  ) {
    self.from = from
    self.to = to
    self.fromTime = fromTime
    self.toTime = toTime
    self.count = count
    self.bytes = bytes
    self.categories = categories
    self.stacks = stacks
    self.modules = modules
  }

  /// The category with this display name, if the growth holds any of its blocks.
  public func category(named name: String) -> CategoryGrowth? {
    categories.first { $0.name == name }
  }
}
