/// Names one allocation for its whole life: the allocating thread's serial and its alloc
/// counter.
///
/// FREE records name the block they free by this id, so matching a free to its allocation never
/// depends on chunk order or on addresses that another thread may have reused.
public struct AllocID: Hashable, Sendable, CustomStringConvertible {
  /// Serial of the thread that allocated the block (1, 2, 3… in order of first allocation).
  public var threadSerial: UInt32
  /// The thread's running count of ALLOC records at this allocation.
  public var counter: UInt64

  /// Creates an alloc id.
  public init(threadSerial: UInt32, counter: UInt64) {
    self.threadSerial = threadSerial
    self.counter = counter
  }

  public var description: String { "alloc \(threadSerial):\(counter)" }
}
