/// Decodes the records of one events chunk, front to back, into absolute events.
///
/// It keeps the running state the format's deltas need (time, previous address, alloc
/// counter), and hands STACK, CATEGORY and MODULE records to the metadata tables as it meets
/// them.
struct ChunkCursor {
  let chunk: ChunkHeader
  private let path: String
  private var cursor: ByteCursor
  /// The time of the latest timed record decoded, or the base time.
  private(set) var time: UInt64
  private var previousAddress: UInt64 = 0
  /// The alloc counter of the previous FREE_NEAR, or the chunk's first.
  private var previousFreed: UInt64
  private var allocCount: UInt64 = 0
  private var recordCount: UInt64 = 0

  /// The alloc counter that the thread's next chunk starts at, which this chunk's ALLOCs must
  /// reach; `nil` for a thread's last chunk.
  private let nextAllocCounter: UInt64?
  /// The trailer's end time: no record may be later.
  private let endTime: UInt64

  init(
    chunk: ChunkHeader, payload: [UInt8], path: String, nextAllocCounter: UInt64? = nil,
    endTime: UInt64 = .max
  ) {
    self.chunk = chunk
    self.path = path
    self.nextAllocCounter = nextAllocCounter
    self.endTime = endTime
    self.cursor = ByteCursor(payload)
    self.time = chunk.baseTime
    self.previousFreed = chunk.firstAllocCounter
  }

  /// Decodes records up to and including the next timed one, and returns it as an event;
  /// `nil` once the payload is used up and its record count checked.
  mutating func nextEvent(metadata: inout TraceMetadata) throws(TraceError) -> TraceEvent? {
    while !cursor.isAtEnd {
      let start = cursor.position
      recordCount &+= 1
      do {
        if let event = try decodeRecord(metadata: &metadata) {
          guard time <= endTime else {
            throw MalformedRecord(detail: "time \(time) ns is after the end time \(endTime) ns")
          }
          return event
        }
      } catch ByteCursor.Failure.overlongVarint {
        throw TraceError(
          path: path, reason: .malformedRecord(location(of: start), "varint over 64 bits"))
      } catch let failure as MalformedRecord {
        throw TraceError(
          path: path, reason: .malformedRecord(location(of: start), failure.detail))
      } catch {
        throw TraceError(path: path, reason: .truncatedRecord(location(of: start)))
      }
    }
    guard recordCount == UInt64(chunk.recordCount) else {
      throw TraceError(
        path: path,
        reason: .recordCountMismatch(
          chunk: chunk.offset, expected: chunk.recordCount, found: recordCount))
    }
    let reached = chunk.firstAllocCounter &+ allocCount
    if let next = nextAllocCounter, reached != next {
      throw TraceError(
        path: path,
        reason: .chunkMismatch(
          chunk: chunk.offset,
          "ends at alloc counter \(reached), but thread \(chunk.threadSerial)'s next chunk starts"
            + " at \(next): \(next > reached ? "allocations are missing" : "allocations overlap")"))
    }
    return nil
  }

  /// Reads the rest of the chunk for its metadata records alone, with the chunk's checks: ALLOC
  /// and FREE records, most of a chunk, are stepped over without becoming events.
  mutating func drainMetadata(into metadata: inout TraceMetadata) throws(TraceError) {
    while let tag = cursor.peekUInt8() {
      let fields: Int
      switch tag {
      case RecordTag.alloc.rawValue: fields = 5
      case RecordTag.freeNear.rawValue: fields = 2
      case RecordTag.free.rawValue: fields = 3
      default:
        _ = try nextEvent(metadata: &metadata)
        continue
      }
      let start = cursor.position
      do {
        _ = try cursor.readUInt8()
        for _ in 0..<fields { _ = try cursor.readVarint() }
      } catch .overlongVarint {
        throw TraceError(
          path: path, reason: .malformedRecord(location(of: start), "varint over 64 bits"))
      } catch {
        throw TraceError(path: path, reason: .truncatedRecord(location(of: start)))
      }
      recordCount &+= 1
      if tag == RecordTag.alloc.rawValue { allocCount &+= 1 }
    }
    _ = try nextEvent(metadata: &metadata)  // at the end: the record count and alloc counter
  }

  private func location(of start: Int) -> TraceError.RecordLocation {
    let isCompressed = chunk.encoding == .zstd
    let offset = isCompressed ? UInt64(start) : chunk.payloadOffset &+ UInt64(start)
    return TraceError.RecordLocation(
      offset: offset, isInDecompressedPayload: isCompressed, chunk: chunk.offset)
  }
}

extension ChunkCursor {
  /// A record whose bytes are all there but whose content is impossible.
  struct MalformedRecord: Error {
    let detail: String
  }

  /// Decodes one record: a timed record becomes an event, a metadata record goes to the tables.
  /// Throws ``ByteCursor/Failure`` when the record runs short, ``MalformedRecord`` otherwise.
  private mutating func decodeRecord(metadata: inout TraceMetadata) throws -> TraceEvent? {
    let tagByte = try cursor.readUInt8()
    guard let tag = RecordTag(rawValue: tagByte) else {
      throw MalformedRecord(detail: "unknown record tag \(tagByte)")
    }
    switch tag {
    case .alloc:
      return .alloc(try decodeAlloc())
    case .free:
      return .free(try decodeFree())
    case .freeNear:
      return .free(try decodeFreeNear())
    default: break
    }
    // A reader that wanted only metadata skipped this chunk on its header's word.
    guard !chunk.flags.contains(.allocationsOnly) else {
      throw MalformedRecord(
        detail: "record tag \(tagByte) in a chunk whose header says it holds only ALLOC, FREE"
          + " and FREE_NEAR records")
    }
    switch tag {
    case .alloc, .free, .freeNear:
      break  // decoded above
    case .carried:
      return .alloc(try decodeCarried())
    case .rss:
      time &+= try cursor.readVarint()
      return .rss(RSSSample(time: time, residentBytes: try cursor.readVarint()))
    case .mark:
      time &+= try cursor.readVarint()
      let kind = MarkEvent.Kind(rawValue: try cursor.readUInt8())
      let name = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      return .mark(
        MarkEvent(time: time, kind: kind, name: name, threadSerial: chunk.threadSerial))
    case .lost:
      time &+= try cursor.readVarint()
      let reason = LostReason(rawValue: try cursor.readUInt8())
      metadata.addLost(try cursor.readVarint(), reason: reason)
    case .stack:
      let id = StackID(try cursor.readVarint())
      let parent = StackID(try cursor.readVarint())
      metadata.addStack(id, parent: parent, pc: try cursor.readVarint())
    case .category:
      let id = CategoryID(try cursor.readVarint())
      let kind = CategoryKind(rawValue: try cursor.readUInt8())
      let name = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      metadata.addCategory(CategoryInfo(id: id, kind: kind, name: name))
    case .swiftType:
      metadata.addCategory(try SwiftTypeName.decode(from: &cursor, modules: metadata))
    case .module:
      metadata.addModule(try decodeModule())
    case .leakScan, .leakBlock, .leakEdge, .leakGraph, .leakRoot, .leakNode:
      try LeakRecords.decode(tag, from: &cursor, into: &metadata)
    case .backingAlloc, .backingFree:
      return .backingStore(try decodeBackingStore(isAllocation: tag == .backingAlloc))
    case .warning, .warningResponse, .footprint, .memoryLimit, .sampling, .counts, .carriedCounts:
      return .memory(try decodeMemory(tag))
    }
    return nil
  }

  private mutating func decodeAlloc() throws -> AllocationEvent {
    time &+= try cursor.readVarint()
    let size = try cursor.readVarint()
    let stack = StackID(try cursor.readVarint())
    let category = CategoryID(try cursor.readVarint())
    let delta = try cursor.readSignedVarint()
    previousAddress = UInt64(bitPattern: Int64(bitPattern: previousAddress) &+ delta)
    let id = AllocID(
      threadSerial: chunk.threadSerial, counter: chunk.firstAllocCounter &+ allocCount)
    allocCount &+= 1
    return AllocationEvent(
      time: time, id: id, address: Address(previousAddress), size: size, stack: stack,
      category: category)
  }

  /// CARRIED: a block live when a rotated file began, with its id spelled out.
  private mutating func decodeCarried() throws -> AllocationEvent {
    time &+= try cursor.readVarint()
    let serial = try cursor.readVarint()
    guard let threadSerial = UInt32(exactly: serial) else {
      throw MalformedRecord(detail: "thread serial \(serial) exceeds 32 bits")
    }
    let id = AllocID(threadSerial: threadSerial, counter: try cursor.readVarint())
    let size = try cursor.readVarint()
    let stack = StackID(try cursor.readVarint())
    let category = CategoryID(try cursor.readVarint())
    return AllocationEvent(
      time: time, id: id, address: Address(try cursor.readVarint()), size: size, stack: stack,
      category: category, isCarriedOver: true)
  }

  private mutating func decodeFree() throws -> FreeEvent {
    time &+= try cursor.readVarint()
    let serial = try cursor.readVarint()
    guard let threadSerial = UInt32(exactly: serial) else {
      throw MalformedRecord(detail: "thread serial \(serial) exceeds 32 bits")
    }
    let counter = try cursor.readVarint()
    if threadSerial == 0 {  // the chunk's own thread; the counter field is an age
      let next = chunk.firstAllocCounter &+ allocCount
      guard counter >= 1, counter <= next else {
        throw MalformedRecord(detail: "a free names an allocation \(counter) back of \(next)")
      }
      let id = AllocID(threadSerial: chunk.threadSerial, counter: next - counter)
      return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
    }
    let id = AllocID(threadSerial: threadSerial, counter: counter)
    return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
  }

  /// A free of the chunk's own thread, named by its alloc counter's delta from the previous one.
  private mutating func decodeFreeNear() throws -> FreeEvent {
    time &+= try cursor.readVarint()
    let counter = previousFreed &+ UInt64(bitPattern: try cursor.readSignedVarint())
    let next = chunk.firstAllocCounter &+ allocCount
    guard counter < next else {
      throw MalformedRecord(detail: "a free names allocation \(counter), not yet made at \(next)")
    }
    previousFreed = counter
    let id = AllocID(threadSerial: chunk.threadSerial, counter: counter)
    return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
  }

  private mutating func decodeModule() throws -> TraceModule {
    let bias = try cursor.readVarint()
    let segmentCount = try cursor.readVarint()
    // Each segment takes at least two bytes; a larger count is corrupt, not a reason to reserve.
    guard segmentCount <= UInt64(cursor.remaining / 2) else { throw ByteCursor.Failure.truncated }
    var segments: [TraceModule.Segment] = []
    segments.reserveCapacity(Int(segmentCount))
    for _ in 0..<segmentCount {
      let start = try cursor.readVarint()
      segments.append(TraceModule.Segment(start: start, size: try cursor.readVarint()))
    }
    let path = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
    let buildID = Array(try cursor.readLengthPrefixedBytes())
    return TraceModule(path: path, loadBias: bias, segments: segments, buildID: buildID)
  }
}

extension ChunkCursor {
  private mutating func decodeBackingStore(isAllocation: Bool) throws -> BackingStoreEvent {
    time &+= try cursor.readVarint()
    let id = try cursor.readVarint()
    let bytes = try cursor.readVarint()
    let category = CategoryID(try cursor.readVarint())
    let stack = isAllocation ? StackID(try cursor.readVarint()) : .empty
    return BackingStoreEvent(
      time: time, kind: isAllocation ? .allocated : .released, id: id, bytes: bytes,
      category: category, stack: stack, threadSerial: chunk.threadSerial)
  }

  private mutating func decodeMemory(_ tag: RecordTag) throws -> MemoryEvent {
    time &+= try cursor.readVarint()
    let detail: MemoryEvent.Detail
    switch tag {
    case .warning:
      let serial = try readSerial()
      let level = PressureLevel(rawValue: try cursor.readUInt8())
      let source = WarningSource(rawValue: try cursor.readUInt8())
      let footprint = try cursor.readVarint()
      let limit = try cursor.readVarint()
      detail = .warning(
        MemoryWarning(
          serial: serial, level: level, source: source, footprintBytes: footprint,
          limitBytes: limit == 0 ? nil : limit))
    case .warningResponse:
      let serial = try readSerial()
      let freed = try cursor.readVarint()
      let name = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      detail = .response(WarningResponse(serial: serial, observer: name, freedBytes: freed))
    case .footprint:
      let reason = Footprint.Reason(rawValue: try cursor.readUInt8())
      detail = .footprint(
        Footprint(
          reason: reason, residentBytes: try cursor.readVarint(),
          mallocLiveBytes: try cursor.readVarint(), mallocUsableBytes: try cursor.readVarint(),
          mallocLiveBlocks: try cursor.readVarint(), backingStoreBytes: try cursor.readVarint(),
          allocatorFreeBytes: try cursor.readVarint()))
    case .sampling:
      detail = .sampling(meanBytes: try cursor.readVarint())
    case .carriedCounts:
      let bytes = try cursor.readSignedVarint()
      detail = .carriedCounts(usableBytes: bytes, blocks: try cursor.readSignedVarint())
    case .counts:
      detail = .counts(
        AllocationCounts(
          allocations: try cursor.readVarint(), frees: try cursor.readVarint(),
          requestedBytes: try cursor.readVarint(), usableBytesAllocated: try cursor.readVarint(),
          usableBytesFreed: try cursor.readVarint()))
    default:
      let footprint = try cursor.readVarint()
      detail = .limitExceeded(
        MemoryLimitExceeded(footprintBytes: footprint, limitBytes: try cursor.readVarint()))
    }
    return MemoryEvent(time: time, threadSerial: chunk.threadSerial, detail: detail)
  }

  private mutating func readSerial() throws -> UInt32 {
    let serial = try cursor.readVarint()
    guard let value = UInt32(exactly: serial) else {
      throw MalformedRecord(detail: "warning serial \(serial) exceeds 32 bits")
    }
    return value
  }
}

extension ChunkCursor {
  /// What a payload's whole records add up to, when no chunk header says how many there are
  /// yet: a buffer that `heapline record` recovers from the shim's shared memory.
  struct Summary {
    var records: UInt32 = 0
    var allocs: UInt64 = 0
    var frees: UInt64 = 0
    /// Bytes of the records that decoded; a record that does not decode ends the payload.
    var wholeBytes = 0
    /// The time and the address that the next record's deltas start from.
    var time: UInt64 = 0
    var previousAddress: UInt64 = 0
  }

  /// Decodes every record up to the end, or up to the first that does not decode.
  mutating func summarize() -> Summary {
    var metadata = TraceMetadata()
    var summary = Summary()
    while !cursor.isAtEnd {
      let event: TraceEvent?
      do {
        event = try decodeRecord(metadata: &metadata)
      } catch {
        break  // keep the records before this one
      }
      if case .free = event { summary.frees += 1 }
      summary.records += 1
      summary.wholeBytes = cursor.position
    }
    summary.allocs = allocCount
    summary.time = time
    summary.previousAddress = previousAddress
    return summary
  }
}
