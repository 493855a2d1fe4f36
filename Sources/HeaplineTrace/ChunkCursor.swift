/// Decodes the records of one events chunk, front to back, into absolute events.
///
/// It keeps the running state the format's deltas need (time, addresses, alloc counters), and
/// hands INFO, PC, STACK, CATEGORY and MODULE records to the metadata tables as it meets them.
/// A version 5 chunk's side section is read first, before its first event: its INFO records
/// define what the ALLOCs after them name, and its TICKs say when the time moves on.
struct ChunkCursor {
  let chunk: ChunkHeader
  private let path: String
  /// Over the events: the payload after the side section.
  private var cursor: ByteCursor
  /// Where the side section's records lie, until they are read.
  private var side: Range<Int>?
  /// The time of the latest timed record decoded, or the base time.
  private(set) var time: UInt64
  private var previousAddress: UInt64 = 0
  /// The alloc counter of the previous FREE_NEAR (version 4), or the chunk's first.
  private var previousFreed: UInt64
  /// The alloc counters of the previous FREE_HERE and FREE_FAR, or the chunk's first.
  private var previousHere: UInt64
  private var previousFar: UInt64
  private var model = AddressModel()
  /// The address of each of the chunk's allocations with its model class in the top 7 bits
  /// (user addresses are below 2^57), by counter less the first: a FREE_HERE puts its block
  /// back into the model.
  private var here: [UInt64] = []
  /// The side section's TICKs: before the event record at each position, the time moves on.
  private var tickPositions: [Int] = []
  private var tickDeltas: [UInt64] = []
  private var nextTick = 0
  private var eventIndex = 0
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
    self.time = chunk.baseTime
    self.previousFreed = chunk.firstAllocCounter
    self.previousHere = chunk.firstAllocCounter
    self.previousFar = chunk.firstAllocCounter
    var cursor = ByteCursor(payload)
    // A length that does not fit leaves the side section to fail as truncated when read.
    if chunk.flags.contains(.sideSection) {
      let length = (try? cursor.readVarint()) ?? UInt64(payload.count)
      let start = cursor.position
      let end = length <= UInt64(payload.count - start) ? start + Int(length) : payload.count + 1
      side = start..<end
      cursor = ByteCursor(payload, position: min(end, payload.count))
    }
    self.cursor = cursor
  }

  /// Decodes records up to and including the next timed one, and returns it as an event;
  /// `nil` once the payload is used up and its record count checked.
  mutating func nextEvent(metadata: inout TraceMetadata) throws(TraceError) -> TraceEvent? {
    if side != nil { try readSide(metadata: &metadata) }
    while !cursor.isAtEnd {
      let start = cursor.position
      recordCount &+= 1
      applyTicks()
      eventIndex += 1
      do {
        if let event = try decodeRecord(metadata: &metadata) {
          try Self.checkTime(time, end: endTime)
          return event
        }
      } catch {
        throw recordError(error, at: start)
      }
    }
    applyTicks()  // those after the last record
    guard nextTick == tickPositions.count else {
      throw TraceError(
        path: path,
        reason: .malformedRecord(
          location(of: cursor.position),
          "a TICK falls after record \(tickPositions[nextTick]) of \(eventIndex)"))
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

  /// What ``appendEvents(to:before:limit:metadata:appended:)`` appended.
  struct Appended {
    var allocations: UInt64 = 0
    var frees: UInt64 = 0
    /// The last allocation appended.
    var lastAllocation: AllocID?
  }

  /// Appends to `batch` the events that ``nextEvent(metadata:)`` would return one by one, for
  /// as long as they are before `clear` and are ALLOCs or frees of the thread's own blocks
  /// (FREE_HERE, FREE_FAR): nearly every event of a trace, decoded here in one loop. Returns
  /// the next event, which it does not append (`batch` holds `limit`, or the merge must place
  /// it), or `nil` at the chunk's end.
  mutating func appendEvents(
    to batch: inout [TraceEvent], before clear: UInt64, limit: Int,
    metadata: inout TraceMetadata, appended: inout Appended
  ) throws(TraceError) -> TraceEvent? {
    if side != nil { try readSide(metadata: &metadata) }
    while batch.count < limit {
      guard let tagByte = cursor.peekUInt8(),
        tagByte & 0xF0 == RecordTag.allocCoded.rawValue || tagByte == RecordTag.freeHere.rawValue
          || tagByte == RecordTag.freeFar.rawValue
      else { return try nextEvent(metadata: &metadata) }
      let start = cursor.position
      recordCount &+= 1
      applyTicks()
      eventIndex += 1
      do {
        _ = try cursor.readUInt8()
        if tagByte & 0xF0 == RecordTag.allocCoded.rawValue {
          let alloc = try decodeCodedAlloc(code: tagByte & 0x0F, metadata: metadata)
          try Self.checkTime(time, end: endTime)
          guard time < clear else { return .alloc(alloc) }
          batch.append(.alloc(alloc))
          appended.allocations &+= 1
          appended.lastAllocation = alloc.id
        } else {
          let free =
            tagByte == RecordTag.freeHere.rawValue ? try decodeFreeHere() : try decodeFreeFar()
          try Self.checkTime(time, end: endTime)
          guard time < clear else { return .free(free) }
          batch.append(.free(free))
          appended.frees &+= 1
        }
      } catch {
        throw recordError(error, at: start)
      }
    }
    return try nextEvent(metadata: &metadata)
  }

  /// The check that no record is later than the trailer's end time. Static, on the two
  /// values: as a method it made a copy of the whole cursor for every record.
  @inline(__always)
  private static func checkTime(_ time: UInt64, end: UInt64) throws(MalformedRecord) {
    if time > end { throw lateTime(time, end: end) }
  }

  @inline(never)
  private static func lateTime(_ time: UInt64, end: UInt64) -> MalformedRecord {
    MalformedRecord(detail: "time \(time) ns is after the end time \(end) ns")
  }

  /// The error of the record at `start`, from what decoding it threw.
  private func recordError(_ error: any Error, at start: Int) -> TraceError {
    switch error {
    case ByteCursor.Failure.overlongVarint:
      TraceError(path: path, reason: .malformedRecord(location(of: start), "varint over 64 bits"))
    case let failure as MalformedRecord:
      TraceError(path: path, reason: .malformedRecord(location(of: start), failure.detail))
    default:
      TraceError(path: path, reason: .truncatedRecord(location(of: start)))
    }
  }

  /// Reads the rest of the chunk for its metadata records alone, with the chunk's checks: ALLOC
  /// and FREE records, most of a chunk, are stepped over without becoming events.
  mutating func drainMetadata(into metadata: inout TraceMetadata) throws(TraceError) {
    if side != nil { try readSide(metadata: &metadata) }
    while let tag = cursor.peekUInt8() {
      guard let fields = Self.eventFields(tag) else {
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
      applyTicks()
      eventIndex += 1
      if tag == RecordTag.alloc.rawValue || tag == RecordTag.allocExplicit.rawValue
        || tag & 0xF0 == 0x40
      {
        allocCount &+= 1
      }
    }
    _ = try nextEvent(metadata: &metadata)  // at the end: the record count and alloc counter
  }

  /// How many varints follow the tag of an ALLOC or FREE record, which a pass that wants only
  /// metadata steps over; `nil` for any other record.
  private static func eventFields(_ tag: UInt8) -> Int? {
    switch tag {
    case RecordTag.alloc.rawValue: 5
    case RecordTag.freeNear.rawValue: 2
    case RecordTag.free.rawValue: 3
    case RecordTag.freeHere.rawValue, RecordTag.freeFar.rawValue: 1
    case RecordTag.freeOther.rawValue: 2
    case RecordTag.allocExplicit.rawValue: 4
    case 0x40...0x4E: 1
    case 0x4F: 2
    default: nil
    }
  }

  @inline(__always)
  private mutating func applyTicks() {
    while nextTick < tickPositions.count && tickPositions[nextTick] == eventIndex {
      time &+= tickDeltas[nextTick]
      nextTick += 1
    }
  }

  /// Reads the side section alone, for a pass that wants the tables and no events.
  mutating func readSideOnly(metadata: inout TraceMetadata) throws(TraceError) {
    try readSide(metadata: &metadata)
  }

  /// Reads the side section: INFO, PC, STACK and MODULE records into the tables, TICKs kept for
  /// the events.
  private mutating func readSide(metadata: inout TraceMetadata) throws(TraceError) {
    guard let range = side else { return }
    side = nil
    var reader = ByteCursor(cursor.bytes, position: range.lowerBound, end: range.upperBound)
    var info: UInt64 = 0
    var infoStack: UInt64 = 0
    var stack: UInt64 = 0
    var pcIndex: UInt64 = 0
    var pc: UInt64 = 0
    var position = 0
    while true {
      let start = reader.position
      guard range.upperBound <= cursor.bytes.count else {
        throw TraceError(path: path, reason: .truncatedRecord(location(of: start)))
      }
      if reader.isAtEnd { break }
      recordCount &+= 1
      func malformed(_ detail: String) -> TraceError {
        TraceError(path: path, reason: .malformedRecord(location(of: start), detail))
      }
      do {
        let tagByte = try reader.readUInt8()
        let tag = RecordTag(rawValue: tagByte)
        // A reader that wanted only stacks and modules skipped this chunk on its header's word.
        if tag == .pc || tag == .stackNode || tag == .module,
          chunk.flags.contains(.noStacksOrModules)
        {
          throw malformed(
            "record tag \(tagByte) in a chunk whose header says it holds no stacks or modules")
        }
        switch tag {
        case .tick:
          let skip = try reader.readVarint()
          guard skip <= UInt64(Int32.max) else { throw malformed("a TICK skips \(skip) records") }
          position += Int(skip)
          tickPositions.append(position)
          let delta = try reader.readVarint()
          guard delta < Self.longestTick else { throw malformed("a TICK moves \(delta) ns on") }
          tickDeltas.append(delta)
        case .info:
          info = info &+ UInt64(bitPattern: try reader.readSignedVarint()) &+ 1
          let size = try Self.blockSize(reader.readVarint())
          infoStack = infoStack &+ UInt64(bitPattern: try reader.readSignedVarint())
          let category = try reader.readVarint()
          let entry = TraceMetadata.AllocationInfo(
            size: size, stack: StackID(infoStack), category: CategoryID(category))
          guard metadata.addInfo(entry, id: info) else {
            throw malformed("INFO \(info) is out of range")
          }
        case .pc:
          pcIndex = pcIndex &+ UInt64(bitPattern: try reader.readSignedVarint()) &+ 1
          pc = pc &+ UInt64(bitPattern: try reader.readSignedVarint())
          guard let index = UInt32(exactly: pcIndex) else {
            throw malformed("PC \(pcIndex) is out of range")
          }
          metadata.addPC(pc, index: index)
        case .module:
          metadata.addModule(try Self.decodeModule(&reader))
        case .stackNode:
          stack = stack &+ UInt64(bitPattern: try reader.readSignedVarint()) &+ 1
          let up = try reader.readVarint()
          let index = try reader.readVarint()
          guard up >= 1, up <= stack, let pcNumber = UInt32(exactly: index) else {
            throw malformed("STACK \(stack) has no parent in range")
          }
          metadata.addStack(StackID(stack), parent: StackID(stack - up), pcIndex: pcNumber)
        default:
          throw malformed("record tag \(tagByte) in a side section")
        }
      } catch let error as TraceError {
        throw error
      } catch let error as MalformedRecord {
        throw malformed(error.detail)
      } catch ByteCursor.Failure.overlongVarint {
        throw TraceError(
          path: path, reason: .malformedRecord(location(of: start), "varint over 64 bits"))
      } catch {
        throw TraceError(path: path, reason: .truncatedRecord(location(of: start)))
      }
    }
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
    guard let tag = RecordTag(byte: tagByte) else {
      throw MalformedRecord(detail: "unknown record tag \(tagByte)")
    }
    switch tag {
    case .allocCoded:
      return .alloc(try decodeCodedAlloc(code: tagByte & 0x0F, metadata: metadata))
    case .freeHere:
      return .free(try decodeFreeHere())
    case .freeFar:
      return .free(try decodeFreeFar())
    case .freeOther:
      return .free(try decodeFreeOther())
    case .allocExplicit:
      return .alloc(try decodeExplicitAlloc())
    case .alloc:
      return .alloc(try decodeAlloc())
    case .free:
      return .free(try decodeFree())
    case .freeNear:
      return .free(try decodeFreeNear())
    case .stack, .module:
      // A reader that wanted only stacks and modules skipped this chunk on its header's word.
      guard !chunk.flags.contains(.noStacksOrModules) else {
        throw MalformedRecord(
          detail: "record tag \(tagByte) in a chunk whose header says it holds no stacks or"
            + " modules")
      }
    case .tick, .info, .pc, .stackNode:
      throw MalformedRecord(detail: "record tag \(tagByte) outside a side section")
    default: break
    }
    switch tag {
    case .alloc, .free, .freeNear, .allocCoded, .freeHere, .freeFar, .freeOther, .allocExplicit,
      .tick, .info, .pc, .stackNode:
      break  // decoded above
    case .carried:
      return .alloc(try decodeCarried())
    case .rss:
      time &+= try cursor.readVarint()
      return .rss(RSSSample(time: time, residentBytes: try cursor.readVarint()))
    case .rssPeak:
      time &+= try cursor.readVarint()
      let resident = try cursor.readVarint()
      return .rss(
        RSSSample(time: time, residentBytes: resident, peakBytes: try cursor.readVarint()))
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
      metadata.addModule(try Self.decodeModule(&cursor))
    case .leakScan, .leakBlock, .leakEdge, .leakGraph, .leakRoot, .leakNode, .leakFailed:
      try LeakRecords.decode(tag, from: &cursor, into: &metadata)
    case .backingAlloc, .backingFree:
      return .backingStore(try decodeBackingStore(isAllocation: tag == .backingAlloc))
    case .warning, .warningResponse, .footprint, .memoryLimit, .sampling, .counts, .carriedCounts:
      return .memory(try decodeMemory(tag))
    }
    return nil
  }

  private static let addressMask: UInt64 = (1 << 57) - 1

  /// A version 5 ALLOC: an info, and the address by its code against the model.
  @inline(__always)
  private mutating func decodeCodedAlloc(code: UInt8, metadata: borrowing TraceMetadata) throws
    -> AllocationEvent
  {
    let infoID = try cursor.readVarint()
    guard let info = metadata.info(infoID) else {
      throw MalformedRecord(detail: "an ALLOC names info \(infoID), which no INFO record defined")
    }
    let delta = code == AddressModel.escape ? try cursor.readSignedVarint() : 0
    guard let address = model.address(code: code, size: info.size, delta: delta) else {
      throw MalformedRecord(detail: "an ALLOC's address code \(code) names no freed block")
    }
    return madeHere(
      address: address, size: info.size, stack: info.stack, category: info.category,
      info: UInt32(truncatingIfNeeded: infoID))
  }

  /// ALLOC_EXPLICIT: every field spelled out; the model moves as it would have for the address.
  private mutating func decodeExplicitAlloc() throws -> AllocationEvent {
    let size = try cursor.readVarint()
    let stack = StackID(try cursor.readVarint())
    let category = CategoryID(try cursor.readVarint())
    let address = try cursor.readVarint()
    model.code(of: address, size: size)
    return madeHere(address: address, size: size, stack: stack, category: category)
  }

  @inline(__always)
  private mutating func madeHere(
    address: UInt64, size: UInt64, stack: StackID, category: CategoryID, info: UInt32 = 0
  ) -> AllocationEvent {
    here.append(address & Self.addressMask | UInt64(AddressModel.bin(size)) << 57)
    let id = AllocID(
      threadSerial: chunk.threadSerial, counter: chunk.firstAllocCounter &+ allocCount)
    allocCount &+= 1
    return AllocationEvent(
      time: time, id: id, address: Address(address), size: size, stack: stack, category: category,
      info: info)
  }

  /// FREE_HERE: a block of this chunk, by its counter's delta from the previous one; it goes
  /// back into the model.
  @inline(__always)
  private mutating func decodeFreeHere() throws -> FreeEvent {
    let counter = previousHere &+ UInt64(bitPattern: try cursor.readSignedVarint())
    let index = counter &- chunk.firstAllocCounter
    guard index < UInt64(here.count) else {
      throw MalformedRecord(
        detail: "a FREE_HERE names allocation \(counter), not one of this chunk's so far")
    }
    previousHere = counter
    let block = here[Int(index)]
    model.freed(block & Self.addressMask, bin: Int(block >> 57))
    let id = AllocID(threadSerial: chunk.threadSerial, counter: counter)
    return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
  }

  /// FREE_FAR: a block of this thread's earlier chunks.
  private mutating func decodeFreeFar() throws -> FreeEvent {
    let counter = previousFar &+ UInt64(bitPattern: try cursor.readSignedVarint())
    guard counter < chunk.firstAllocCounter else {
      throw MalformedRecord(
        detail: "a FREE_FAR names allocation \(counter), not one of the thread's earlier chunks")
    }
    previousFar = counter
    let id = AllocID(threadSerial: chunk.threadSerial, counter: counter)
    return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
  }

  /// FREE_OTHER: another thread's block, by its id.
  private mutating func decodeFreeOther() throws -> FreeEvent {
    let serial = try cursor.readVarint()
    guard let threadSerial = UInt32(exactly: serial) else {
      throw MalformedRecord(detail: "thread serial \(serial) exceeds 32 bits")
    }
    let id = AllocID(threadSerial: threadSerial, counter: try cursor.readVarint())
    return FreeEvent(time: time, id: id, threadSerial: chunk.threadSerial)
  }

  /// No block is larger than the address space (2^47 bytes on x86-64): a larger size is a damaged
  /// or forged record, whose sums would wrap (a size of 2^64 - 1 made "Bytes allocated" small).
  static func blockSize(_ size: UInt64) throws -> UInt64 {
    guard size < 1 << 48 else { throw MalformedRecord(detail: "a block of \(size) bytes") }
    return size
  }

  /// No thread's clock moves 36 years in one step: a TICK past this is damaged or forged (one
  /// of 2^64 - 1 ns wrapped the time back by a nanosecond, and moved the report's peak).
  static let longestTick: UInt64 = 1 << 60

  private mutating func decodeAlloc() throws -> AllocationEvent {
    time &+= try cursor.readVarint()
    let size = try Self.blockSize(cursor.readVarint())
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
    let size = try Self.blockSize(cursor.readVarint())
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

  private static func decodeModule(_ cursor: inout ByteCursor) throws -> TraceModule {
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
  /// What a buffer's whole records add up to, when no chunk header says how many there are
  /// yet: a buffer that `heapline record` recovers from the shim's shared memory.
  struct Summary {
    var records: UInt32 = 0
    var allocs: UInt64 = 0
    var frees: UInt64 = 0
    /// Records of the events section, and of the side section that are kept.
    var eventRecords = 0
    /// STACK, PC and MODULE records: a chunk without them is flagged.
    var stackRecords = 0
    /// Bytes of the records that decoded, in each section; a record that does not decode ends
    /// its section, and a TICK past the events kept ends the side section.
    var sideBytes = 0
    var eventBytes = 0
    /// The time after the last record kept, and the place of the last TICK kept.
    var time: UInt64 = 0
    var lastTick = 0
  }

  /// Steps over every record of a buffer's `side` and `events` sections up to their ends, or
  /// up to the first that does not decode, without the tables that the records' meaning needs
  /// (the INFO records of the thread's earlier chunks, say).
  static func summarize(side: [UInt8], events: [UInt8], baseTime: UInt64) -> Summary {
    var summary = Summary()
    var sideRecords: [(end: Int, tick: (position: Int, delta: UInt64)?, stacks: Bool)] = []
    var reader = ByteCursor(side)
    var position = 0
    while !reader.isAtEnd {
      do {
        let tag = RecordTag(rawValue: try reader.readUInt8())
        var tick: (Int, UInt64)?
        switch tag {
        case .tick:
          position += Int(min(try reader.readVarint(), UInt64(Int32.max)))
          tick = (position, try reader.readVarint())
        case .info: for _ in 0..<4 { _ = try reader.readVarint() }
        case .pc: for _ in 0..<2 { _ = try reader.readVarint() }
        case .stackNode: for _ in 0..<3 { _ = try reader.readVarint() }
        case .module: _ = try decodeModule(&reader)
        default: throw ByteCursor.Failure.truncated
        }
        sideRecords.append(
          (reader.position, tick, tag == .pc || tag == .stackNode || tag == .module))
      } catch {
        break
      }
    }
    let header = ChunkHeader(
      offset: 0, kind: .events, encoding: .raw, threadSerial: 0, threadID: 0, storedLength: 0,
      rawLength: 0, baseTime: baseTime, firstAllocCounter: 0, recordCount: 0, checksum: 0)
    var cursor = ChunkCursor(chunk: header, payload: events, path: "")
    cursor.tickPositions = sideRecords.compactMap { $0.tick?.position }
    cursor.tickDeltas = sideRecords.compactMap { $0.tick?.delta }
    var metadata = TraceMetadata()
    while !cursor.cursor.isAtEnd {
      let tag = cursor.cursor.peekUInt8()!
      let saved = cursor
      cursor.applyTicks()
      cursor.eventIndex += 1
      do {
        if let fields = eventFields(tag) {
          _ = try cursor.cursor.readUInt8()
          for _ in 0..<fields { _ = try cursor.cursor.readVarint() }
          if tag == RecordTag.alloc.rawValue || tag == RecordTag.allocExplicit.rawValue
            || tag & 0xF0 == 0x40
          {
            summary.allocs += 1
          } else {
            summary.frees += 1
          }
        } else {
          _ = try cursor.decodeRecord(metadata: &metadata)
          if tag == RecordTag.module.rawValue || tag == RecordTag.stack.rawValue {
            summary.stackRecords += 1
          }
        }
      } catch {
        cursor = saved
        break  // keep the records before this one
      }
      summary.eventRecords += 1
      summary.eventBytes = cursor.cursor.position
    }
    cursor.applyTicks()
    for record in sideRecords {
      if let tick = record.tick, tick.position > summary.eventRecords { break }
      summary.sideBytes = record.end
      summary.records += 1
      if record.stacks { summary.stackRecords += 1 }
      if let tick = record.tick { summary.lastTick = tick.position }
    }
    summary.records += UInt32(summary.eventRecords)
    summary.time = cursor.time
    return summary
  }
}
