/// One timed record of a trace, as ``TraceEventStream`` yields them in time order.
///
/// Times are nanoseconds since the trace's start time (``TraceHeader/startMonotonicNanoseconds``).
public enum TraceEvent: Hashable, Sendable {
  /// A block was allocated.
  case alloc(AllocationEvent)
  /// A block was freed.
  case free(FreeEvent)
  /// The resident set size was sampled.
  case rss(RSSSample)

  /// Nanoseconds since the trace's start time.
  public var time: UInt64 {
    switch self {
    case .alloc(let event): event.time
    case .free(let event): event.time
    case .rss(let sample): sample.time
    }
  }
}

/// An ALLOC record, resolved: its id, address and time are absolute.
public struct AllocationEvent: Hashable, Sendable {
  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// The allocation's id; its thread serial is the allocating thread.
  public var id: AllocID
  /// The block's address.
  public var address: Address
  /// The requested size in bytes.
  public var size: UInt64
  /// The allocating call stack.
  public var stack: StackID
  /// The block's category.
  public var category: CategoryID

  /// Creates an allocation event.
  public init(
    time: UInt64, id: AllocID, address: Address, size: UInt64, stack: StackID,
    category: CategoryID
  ) {
    self.time = time
    self.id = id
    self.address = address
    self.size = size
    self.stack = stack
    self.category = category
  }

  /// Serial of the allocating thread.
  public var threadSerial: UInt32 { id.threadSerial }
}

/// A FREE record: which allocation was freed, by which thread, when.
public struct FreeEvent: Hashable, Sendable {
  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// The id of the allocation freed.
  public var id: AllocID
  /// Serial of the freeing thread, which may differ from the allocating one.
  public var threadSerial: UInt32

  /// Creates a free event.
  public init(time: UInt64, id: AllocID, threadSerial: UInt32) {
    self.time = time
    self.id = id
    self.threadSerial = threadSerial
  }
}

/// An RSS record: the resident set size at one moment.
public struct RSSSample: Hashable, Sendable {
  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// Resident bytes.
  public var residentBytes: UInt64

  /// Creates a sample.
  public init(time: UInt64, residentBytes: UInt64) {
    self.time = time
    self.residentBytes = residentBytes
  }
}
