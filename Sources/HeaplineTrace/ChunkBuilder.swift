/// Builds the records of one events chunk, with the deltas the format uses, for
/// ``TraceWriter``.
///
/// Times are absolute (nanoseconds since the start time); the builder turns them into `dt`
/// values and sets the chunk's base time from its first timed record.
///
/// ```swift
/// var chunk = writer.makeChunk(threadSerial: 1)
/// let block = chunk.alloc(at: 1_000, size: 48, address: 0x1000)
/// chunk.free(at: 2_000, block)
/// try writer.append(chunk)
/// ```
public struct ChunkBuilder: Sendable {
  /// Serial of the thread that writes the chunk.
  public var threadSerial: UInt32
  /// Kernel thread id written in the header.
  public var threadID: UInt32
  /// Alloc counter of the chunk's first ALLOC.
  public var firstAllocCounter: UInt64
  /// Base time, set by the first timed record unless given.
  public var baseTime: UInt64?
  /// Records appended so far.
  public private(set) var recordCount: UInt32 = 0
  /// ALLOC records appended so far.
  public private(set) var allocCount: UInt64 = 0
  /// FREE records appended so far.
  public private(set) var freeCount: UInt64 = 0

  private var payload = ByteWriter()
  private var lastTime: UInt64?
  private var previousAddress: UInt64 = 0
  private var previousFreed: UInt64?

  /// Creates an empty chunk for thread `threadSerial`.
  public init(
    threadSerial: UInt32, threadID: UInt32? = nil, firstAllocCounter: UInt64 = 0,
    baseTime: UInt64? = nil
  ) {
    self.threadSerial = threadSerial
    self.threadID = threadID ?? (1000 + threadSerial)
    self.firstAllocCounter = firstAllocCounter
    self.baseTime = baseTime
  }

  /// The raw payload bytes.
  public var payloadBytes: [UInt8] { payload.bytes }

  /// The alloc id that the next ALLOC will get.
  public var nextAllocID: AllocID {
    AllocID(threadSerial: threadSerial, counter: firstAllocCounter + allocCount)
  }

  /// Appends an ALLOC; the category defaults to the size class of `size`.
  @discardableResult
  public mutating func alloc(
    at time: UInt64, size: UInt64, address: Address, stack: StackID = .empty,
    category: CategoryID? = nil
  ) -> AllocID {
    let id = nextAllocID
    payload.appendUInt8(RecordTag.alloc.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(size)
    payload.appendVarint(stack.rawValue)
    payload.appendVarint((category ?? CategoryID(sizeClassFor: size)).rawValue)
    payload.appendSignedVarint(Int64(bitPattern: address.rawValue &- previousAddress))
    previousAddress = address.rawValue
    allocCount += 1
    recordCount += 1
    return id
  }

  /// Appends a FREE of the allocation `id`, which any thread may have made.
  public mutating func free(at time: UInt64, _ id: AllocID) {
    let next = firstAllocCounter + allocCount
    if id.threadSerial == threadSerial && id.counter < next {
      // The chunk's own thread: FREE_NEAR, the counter's delta from the previous one, as the
      // shim writes it.
      payload.appendUInt8(RecordTag.freeNear.rawValue)
      payload.appendVarint(delta(to: time))
      let previous = previousFreed ?? firstAllocCounter
      payload.appendSignedVarint(Int64(bitPattern: id.counter &- previous))
      previousFreed = id.counter
    } else {
      payload.appendUInt8(RecordTag.free.rawValue)
      payload.appendVarint(delta(to: time))
      payload.appendVarint(UInt64(id.threadSerial))
      payload.appendVarint(id.counter)
    }
    freeCount += 1
    recordCount += 1
  }

  /// Appends an RSS sample.
  public mutating func rss(at time: UInt64, residentBytes: UInt64) {
    payload.appendUInt8(RecordTag.rss.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(residentBytes)
    recordCount += 1
  }

  /// Appends a MARK: a generation boundary or a memory warning.
  public mutating func mark(at time: UInt64, kind: MarkEvent.Kind = .generation, name: String) {
    payload.appendUInt8(RecordTag.mark.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendUInt8(kind.rawValue)
    payload.appendLengthPrefixed(Array(name.utf8))
    recordCount += 1
  }

  /// Appends a LOST record: `count` allocations and frees that could not be recorded.
  public mutating func lost(at time: UInt64, reason: LostReason, count: UInt64) {
    payload.appendUInt8(RecordTag.lost.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendUInt8(reason.rawValue)
    payload.appendVarint(count)
    recordCount += 1
  }

  /// Appends a STACK node: `id` is `parent` with `pc` as its new innermost frame.
  public mutating func stack(_ id: StackID, parent: StackID, pc: UInt64) {
    payload.appendUInt8(RecordTag.stack.rawValue)
    payload.appendVarint(id.rawValue)
    payload.appendVarint(parent.rawValue)
    payload.appendVarint(pc)
    recordCount += 1
  }

  /// Appends a CATEGORY record naming `id`.
  public mutating func category(_ id: CategoryID, kind: CategoryKind, name: String) {
    payload.appendUInt8(RecordTag.category.rawValue)
    payload.appendVarint(id.rawValue)
    payload.appendUInt8(kind.rawValue)
    payload.appendLengthPrefixed(Array(name.utf8))
    recordCount += 1
  }

  /// Appends a MODULE record.
  public mutating func module(_ module: TraceModule) {
    payload.appendUInt8(RecordTag.module.rawValue)
    payload.appendVarint(module.loadBias)
    payload.appendVarint(UInt64(module.segments.count))
    for segment in module.segments {
      payload.appendVarint(segment.start)
      payload.appendVarint(segment.size)
    }
    payload.appendLengthPrefixed(Array(module.path.utf8))
    payload.appendLengthPrefixed(module.buildID)
    recordCount += 1
  }

  /// Appends bytes as they are, counted as `records` records: for building damaged chunks.
  public mutating func appendRaw(_ bytes: [UInt8], records: UInt32 = 1) {
    payload.append(bytes)
    recordCount += records
  }

  /// The `dt` of a timed record at `time`; the first one fixes the base time.
  private mutating func delta(to time: UInt64) -> UInt64 {
    let previous = lastTime ?? baseTime ?? time
    if baseTime == nil { baseTime = time }
    precondition(time >= previous, "records of one chunk must be in time order")
    lastTime = time
    return time - previous
  }
}

extension ChunkBuilder {
  /// Appends a BACKING_ALLOC (`.allocated`) or BACKING_FREE (`.released`) record.
  ///
  /// ```swift
  /// chunk.category(CategoryID(0x400), kind: .backingStore, name: "Decoded images")
  /// chunk.backingStore(at: 1_000, .allocated, id: 0x7000, bytes: 4_096,
  ///                    category: CategoryID(0x400))
  /// ```
  public mutating func backingStore(
    at time: UInt64, _ kind: BackingStoreEvent.Kind, id: UInt64, bytes: UInt64,
    category: CategoryID, stack: StackID = .empty
  ) {
    payload.appendUInt8((kind == .allocated ? RecordTag.backingAlloc : .backingFree).rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(id)
    payload.appendVarint(bytes)
    payload.appendVarint(category.rawValue)
    if kind == .allocated { payload.appendVarint(stack.rawValue) }
    recordCount += 1
  }

  /// Appends a memory warning as the shim writes it: a MARK of kind 2 named after its level,
  /// then its WARNING record.
  public mutating func memoryWarning(at time: UInt64, _ warning: MemoryWarning) {
    mark(at: time, kind: .memoryWarning, name: warning.level.description)
    payload.appendUInt8(RecordTag.warning.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(UInt64(warning.serial))
    payload.appendUInt8(warning.level.rawValue)
    payload.appendUInt8(warning.source.rawValue)
    payload.appendVarint(warning.footprintBytes)
    payload.appendVarint(warning.limitBytes ?? 0)
    recordCount += 1
  }

  /// Appends a WARNING_RESPONSE: what one observer freed for a warning.
  public mutating func warningResponse(at time: UInt64, _ response: WarningResponse) {
    payload.appendUInt8(RecordTag.warningResponse.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(UInt64(response.serial))
    payload.appendVarint(response.freedBytes)
    payload.appendLengthPrefixed(Array(response.observer.utf8))
    recordCount += 1
  }

  /// Appends a FOOTPRINT record.
  public mutating func footprint(at time: UInt64, _ footprint: Footprint) {
    payload.appendUInt8(RecordTag.footprint.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendUInt8(footprint.reason.rawValue)
    for value in [
      footprint.residentBytes, footprint.mallocLiveBytes, footprint.mallocUsableBytes,
      footprint.mallocLiveBlocks, footprint.backingStoreBytes, footprint.allocatorFreeBytes,
    ] {
      payload.appendVarint(value)
    }
    recordCount += 1
  }

  /// Appends a MEMORY_LIMIT record.
  public mutating func memoryLimitExceeded(at time: UInt64, _ limit: MemoryLimitExceeded) {
    payload.appendUInt8(RecordTag.memoryLimit.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(limit.footprintBytes)
    payload.appendVarint(limit.limitBytes)
    recordCount += 1
  }

  /// Appends a SAMPLING record (time 0): the trace samples one allocation every `meanBytes`.
  public mutating func sampling(meanBytes: UInt64) {
    payload.appendUInt8(RecordTag.sampling.rawValue)
    payload.appendVarint(delta(to: 0))
    payload.appendVarint(meanBytes)
    recordCount += 1
  }

  /// Appends a COUNTS record: a thread's calls since its previous one, in sampling mode.
  public mutating func counts(at time: UInt64, _ counts: AllocationCounts) {
    payload.appendUInt8(RecordTag.counts.rawValue)
    payload.appendVarint(delta(to: time))
    for value in [
      counts.allocations, counts.frees, counts.requestedBytes, counts.usableBytesAllocated,
      counts.usableBytesFreed,
    ] {
      payload.appendVarint(value)
    }
    recordCount += 1
  }
}
