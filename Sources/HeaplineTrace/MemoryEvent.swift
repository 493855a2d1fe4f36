/// A record about the process's memory as a whole: a memory warning, an observer's answer to
/// one, a footprint breakdown, or a memory-limit kill.
///
/// ```swift
/// if case .memory(let event) = event, case .warning(let warning) = event.detail {
///   print("\(warning.level) from \(warning.source) at \(event.time) ns")
/// }
/// ```
public struct MemoryEvent: Hashable, Sendable {
  /// What the record says.
  public enum Detail: Hashable, Sendable {
    /// A WARNING record: the details of the memory warning whose MARK (kind 2) comes just
    /// before it.
    case warning(MemoryWarning)
    /// A WARNING_RESPONSE record: what one observer freed for a warning.
    case response(WarningResponse)
    /// A FOOTPRINT record: RSS broken down, at the end of the recording or at a kill.
    case footprint(Footprint)
    /// A MEMORY_LIMIT record: the footprint crossed the budget and the process was killed.
    case limitExceeded(MemoryLimitExceeded)
    /// A SAMPLING record, at time 0: the trace samples allocations, on average one every this
    /// many bytes allocated, and its ALLOC and FREE records are the sampled blocks'.
    case sampling(meanBytes: UInt64)
    /// A COUNTS record: every allocation and free of one thread since its previous one.
    case counts(AllocationCounts)
    /// A CARRIED_COUNTS record, at the start of a sampled, rotated recording's file: what the
    /// COUNTS records of the files before add up to, live usable bytes and live blocks (signed:
    /// one thread's frees may be counted before another's allocations of the same blocks).
    case carriedCounts(usableBytes: Int64, blocks: Int64)
  }

  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// Serial of the thread that wrote the record (0 for the shim's own thread).
  public var threadSerial: UInt32
  /// The record's content.
  public var detail: Detail

  /// Creates a memory event.
  public init(time: UInt64, threadSerial: UInt32, detail: Detail) {
    self.time = time
    self.threadSerial = threadSerial
    self.detail = detail
  }
}

/// A MEMORY_LIMIT record: the footprint that crossed the budget, and the budget.
public struct MemoryLimitExceeded: Hashable, Sendable {
  /// The footprint (RSS) that crossed the limit, in bytes.
  public var footprintBytes: UInt64
  /// The budget, `heapline record --memory-limit`, in bytes.
  public var limitBytes: UInt64

  /// Creates the record's content.
  public init(footprintBytes: UInt64, limitBytes: UInt64) {
    self.footprintBytes = footprintBytes
    self.limitBytes = limitBytes
  }
}
