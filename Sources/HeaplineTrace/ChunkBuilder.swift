import Synchronization

/// Builds the records of one events chunk, encoded as the shim encodes them, for
/// ``TraceWriter``.
///
/// Times are absolute (nanoseconds since the start time); the builder turns them into `dt`
/// values and TICKs, sets the chunk's base time from its first timed record, defines each
/// allocation info in the chunk's side section before the first ALLOC that names it, and codes
/// addresses against the chunk's address model.
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
  /// Records appended so far, both sections.
  public private(set) var recordCount: UInt32 = 0
  /// ALLOC records appended so far.
  public private(set) var allocCount: UInt64 = 0
  /// FREE records appended so far.
  public private(set) var freeCount: UInt64 = 0

  private var payload = ByteWriter()
  private var side = ByteWriter()
  private var eventRecords = 0
  private var tickedAt = 0
  private var stackRecords = 0
  private var lastTime: UInt64?
  private var model = AddressModel()
  private var hereAddresses: [UInt64] = []
  private var hereSizes: [UInt64] = []
  private var previousHere: UInt64?
  private var previousFar: UInt64?
  private var defined: Set<UInt64> = []
  private var previousInfo: UInt64 = 0
  private var previousInfoStack: UInt64 = 0
  private var previousStack: UInt64 = 0
  private var previousPCIndex: UInt64 = 0
  private var previousPC: UInt64 = 0
  private var definedPCs: Set<UInt64> = []

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

  /// The raw payload bytes: the side section after its length, when there is one, then the
  /// events.
  public var payloadBytes: [UInt8] {
    guard !side.bytes.isEmpty else { return payload.bytes }
    var bytes = ByteWriter()
    bytes.appendVarint(UInt64(side.bytes.count))
    return bytes.bytes + side.bytes + payload.bytes
  }

  /// What the header says of the payload: whether it has a side section, and stack records.
  public var flags: ChunkFlags {
    var flags: ChunkFlags = stackRecords == 0 ? .noStacksOrModules : []
    if !side.bytes.isEmpty { flags.insert(.sideSection) }
    return flags
  }

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
    eventTime(time)
    let category = category ?? CategoryID(sizeClassFor: size)
    let info = Self.infoID(size: size, stack: stack.rawValue, category: category.rawValue)
    if defined.insert(info).inserted {
      side.appendUInt8(RecordTag.info.rawValue)
      side.appendSignedVarint(Int64(bitPattern: info &- previousInfo &- 1))
      side.appendVarint(size)
      side.appendSignedVarint(Int64(bitPattern: stack.rawValue &- previousInfoStack))
      side.appendVarint(category.rawValue)
      previousInfo = info
      previousInfoStack = stack.rawValue
      recordCount += 1
    }
    let (code, carve) = model.code(of: address.rawValue, size: size)
    payload.appendUInt8(RecordTag.allocCoded.rawValue | code)
    payload.appendVarint(info)
    if code == AddressModel.escape {
      payload.appendSignedVarint(Int64(bitPattern: address.rawValue &- carve))
    }
    hereAddresses.append(address.rawValue)
    hereSizes.append(size)
    allocCount += 1
    countEvent()
    return id
  }

  /// Appends a FREE of the allocation `id`, which any thread may have made.
  public mutating func free(at time: UInt64, _ id: AllocID) {
    eventTime(time)
    let next = firstAllocCounter + allocCount
    if id.threadSerial == threadSerial && id.counter >= firstAllocCounter && id.counter < next {
      // A block of this chunk: FREE_HERE, back into the address model, as the shim writes it.
      payload.appendUInt8(RecordTag.freeHere.rawValue)
      let previous = previousHere ?? firstAllocCounter
      payload.appendSignedVarint(Int64(bitPattern: id.counter &- previous))
      previousHere = id.counter
      let index = Int(id.counter - firstAllocCounter)
      model.freed(hereAddresses[index], size: hereSizes[index])
    } else if id.threadSerial == threadSerial && id.counter < firstAllocCounter {
      payload.appendUInt8(RecordTag.freeFar.rawValue)
      let previous = previousFar ?? firstAllocCounter
      payload.appendSignedVarint(Int64(bitPattern: id.counter &- previous))
      previousFar = id.counter
    } else {
      payload.appendUInt8(RecordTag.freeOther.rawValue)
      payload.appendVarint(UInt64(id.threadSerial))
      payload.appendVarint(id.counter)
    }
    freeCount += 1
    countEvent()
  }

  /// Appends an RSS sample.
  public mutating func rss(at time: UInt64, residentBytes: UInt64) {
    payload.appendUInt8(RecordTag.rss.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(residentBytes)
    countEvent()
  }

  /// Appends a MARK: a generation boundary or a memory warning.
  public mutating func mark(at time: UInt64, kind: MarkEvent.Kind = .generation, name: String) {
    payload.appendUInt8(RecordTag.mark.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendUInt8(kind.rawValue)
    payload.appendLengthPrefixed(Array(name.utf8))
    countEvent()
  }

  /// Appends a LOST record: `count` allocations and frees that could not be recorded.
  public mutating func lost(at time: UInt64, reason: LostReason, count: UInt64) {
    payload.appendUInt8(RecordTag.lost.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendUInt8(reason.rawValue)
    payload.appendVarint(count)
    countEvent()
  }

  /// Appends a STACK node: `id` is `parent` with `pc` as its new innermost frame. It goes to
  /// the side section, after the PC record that numbers `pc` if this chunk has none yet.
  public mutating func stack(_ id: StackID, parent: StackID, pc: UInt64) {
    precondition(parent.rawValue < id.rawValue, "a STACK node's parent comes before it")
    let index = Self.pcIndex(pc)
    if definedPCs.insert(index).inserted {
      side.appendUInt8(RecordTag.pc.rawValue)
      side.appendSignedVarint(Int64(bitPattern: index &- previousPCIndex &- 1))
      side.appendSignedVarint(Int64(bitPattern: pc &- previousPC))
      previousPCIndex = index
      previousPC = pc
      recordCount += 1
    }
    side.appendUInt8(RecordTag.stackNode.rawValue)
    side.appendSignedVarint(Int64(bitPattern: id.rawValue &- previousStack &- 1))
    side.appendVarint(id.rawValue - parent.rawValue)
    side.appendVarint(index)
    previousStack = id.rawValue
    stackRecords += 1
    recordCount += 1
  }

  /// Appends a version 4 STACK record in the events, as traces before version 5 have them.
  public mutating func stackVersion4(_ id: StackID, parent: StackID, pc: UInt64) {
    payload.appendUInt8(RecordTag.stack.rawValue)
    payload.appendVarint(id.rawValue)
    payload.appendVarint(parent.rawValue)
    payload.appendVarint(pc)
    stackRecords += 1
    countEvent()
  }

  /// Appends a CATEGORY record naming `id`.
  public mutating func category(_ id: CategoryID, kind: CategoryKind, name: String) {
    payload.appendUInt8(RecordTag.category.rawValue)
    payload.appendVarint(id.rawValue)
    payload.appendUInt8(kind.rawValue)
    payload.appendLengthPrefixed(Array(name.utf8))
    countEvent()
  }

  /// Appends a MODULE record, to the side section as the shim writes it.
  public mutating func module(_ module: TraceModule) {
    side.appendUInt8(RecordTag.module.rawValue)
    side.appendVarint(module.loadBias)
    side.appendVarint(UInt64(module.segments.count))
    for segment in module.segments {
      side.appendVarint(segment.start)
      side.appendVarint(segment.size)
    }
    side.appendLengthPrefixed(Array(module.path.utf8))
    side.appendLengthPrefixed(module.buildID)
    stackRecords += 1
    recordCount += 1
  }

  /// Appends bytes to the events as they are, counted as `records` records: for building
  /// damaged chunks.
  public mutating func appendRaw(_ bytes: [UInt8], records: UInt32 = 1) {
    payload.append(bytes)
    recordCount += records
    eventRecords += Int(records)
  }

  /// Appends bytes to the side section as they are, counted as `records` records.
  public mutating func appendRawSide(_ bytes: [UInt8], records: UInt32 = 1) {
    side.append(bytes)
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

  /// An ALLOC's or FREE's time: a TICK before it when the time has moved on (to the
  /// nanosecond: the shim's are coarser, but the reader takes any).
  private mutating func eventTime(_ time: UInt64) {
    let dt = delta(to: time)
    guard dt > 0 else { return }
    side.appendUInt8(RecordTag.tick.rawValue)
    side.appendVarint(UInt64(eventRecords - tickedAt))
    side.appendVarint(dt)
    tickedAt = eventRecords
    recordCount += 1
  }

  private mutating func countEvent() {
    eventRecords += 1
    recordCount += 1
  }

  /// Info ids, one for each (size, stack, category) across every builder of the process, so
  /// that the chunks of different writers and threads never give one id two meanings.
  private static let infos = Mutex<[[UInt64]: UInt64]>([:])
  private static let pcs = Mutex<[UInt64: UInt64]>([:])

  private static func infoID(size: UInt64, stack: UInt64, category: UInt64) -> UInt64 {
    infos.withLock { table in
      let key = [size, stack, category]
      if let id = table[key] { return id }
      let id = UInt64(table.count + 1)
      table[key] = id
      return id
    }
  }

  private static func pcIndex(_ pc: UInt64) -> UInt64 {
    pcs.withLock { table in
      if let index = table[pc] { return index }
      let index = UInt64(table.count + 1)
      table[pc] = index
      return index
    }
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
    countEvent()
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
    countEvent()
  }

  /// Appends a WARNING_RESPONSE: what one observer freed for a warning.
  public mutating func warningResponse(at time: UInt64, _ response: WarningResponse) {
    payload.appendUInt8(RecordTag.warningResponse.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(UInt64(response.serial))
    payload.appendVarint(response.freedBytes)
    payload.appendLengthPrefixed(Array(response.observer.utf8))
    countEvent()
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
    countEvent()
  }

  /// Appends a MEMORY_LIMIT record.
  public mutating func memoryLimitExceeded(at time: UInt64, _ limit: MemoryLimitExceeded) {
    payload.appendUInt8(RecordTag.memoryLimit.rawValue)
    payload.appendVarint(delta(to: time))
    payload.appendVarint(limit.footprintBytes)
    payload.appendVarint(limit.limitBytes)
    countEvent()
  }

  /// Appends a SAMPLING record (time 0): the trace samples one allocation every `meanBytes`.
  public mutating func sampling(meanBytes: UInt64) {
    payload.appendUInt8(RecordTag.sampling.rawValue)
    payload.appendVarint(delta(to: 0))
    payload.appendVarint(meanBytes)
    countEvent()
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
    countEvent()
  }
}
