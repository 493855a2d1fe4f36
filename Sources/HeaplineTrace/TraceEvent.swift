/// One timed record of a trace, as ``TraceEventStream`` yields them in time order.
///
/// Times are nanoseconds since the trace's start time (``TraceHeader/startMonotonicNanoseconds``).
/// Events are plain data, their strings too: copying one copies bytes.
public enum TraceEvent: Hashable, Sendable {
  /// A block was allocated.
  case alloc(AllocationEvent)
  /// A block was freed.
  case free(FreeEvent)
  /// The resident set size was sampled.
  case rss(RSSSample)
  /// A named instant: a generation boundary or a memory warning.
  case mark(MarkEvent)
  /// Memory outside malloc was reported or released.
  case backingStore(BackingStoreEvent)
  /// A memory warning's details, an observer's answer, a footprint or a memory-limit kill.
  case memory(MemoryEvent)

  /// Nanoseconds since the trace's start time.
  public var time: UInt64 {
    switch self {
    case .alloc(let event): event.time
    case .free(let event): event.time
    case .rss(let sample): sample.time
    case .mark(let mark): mark.time
    case .backingStore(let store): store.time
    case .memory(let memory): memory.time
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
  /// The block was allocated before this file began, and is live at its start: a rotated
  /// recording's file (`heapline record --rotate`) carries it over from the file before, at its
  /// start time, under its original id. It counts as live, not as an allocation of this file.
  public var isCarriedOver: Bool
  /// The allocation info its record named (version 5), which every allocation of the same
  /// size, stack and category names; 0 when the record spelled those out.
  public var info: UInt32

  /// Creates an allocation event.
  public init(
    time: UInt64, id: AllocID, address: Address, size: UInt64, stack: StackID,
    category: CategoryID, isCarriedOver: Bool = false, info: UInt32 = 0
  ) {
    self.time = time
    self.id = id
    self.address = address
    self.size = size
    self.stack = stack
    self.category = category
    self.isCarriedOver = isCarriedOver
    self.info = info
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
  /// The kernel's high-water mark of resident bytes (VmHWM), when it rose above
  /// `residentBytes` since the previous sample: the process was that large at some instant
  /// after it, which the samples missed.
  public var peakBytes: UInt64?

  /// Creates a sample.
  public init(time: UInt64, residentBytes: UInt64, peakBytes: UInt64? = nil) {
    self.time = time
    self.residentBytes = residentBytes
    self.peakBytes = peakBytes
  }
}

/// A MARK record: a named instant that splits the trace into generations, or a memory warning.
public struct MarkEvent: Hashable, Sendable {
  /// What a mark stands for.
  public struct Kind: RawRepresentable, Hashable, Sendable {
    /// The kind byte as written.
    public var rawValue: UInt8
    /// Wraps a kind byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// A generation boundary, from `Heapline.mark(_:)`, `heapline_mark()`, a signal or a timer.
    public static let generation = Kind(rawValue: 1)
    /// A memory warning; the name is its level.
    public static let memoryWarning = Kind(rawValue: 2)
  }

  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// Generation boundary or memory warning.
  public var kind: Kind
  /// The mark's name, or the warning's level.
  public var name: String {
    get { nameText.string }
    set { nameText = EventText(newValue) }
  }
  private var nameText: EventText
  /// Serial of the thread that wrote the mark (0 for the shim's own thread).
  public var threadSerial: UInt32

  /// Creates a mark event.
  public init(time: UInt64, kind: Kind, name: String, threadSerial: UInt32) {
    self.time = time
    self.kind = kind
    self.nameText = EventText(name)
    self.threadSerial = threadSerial
  }
}
