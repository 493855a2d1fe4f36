/// Decoding and encoding of the leak-scan records, tags `0x10` to `0x16` (<doc:TraceFormat>).
///
/// None of them is timed: LEAK_SCAN carries an absolute time, so ``ChunkCursor`` hands them here
/// with no state of its own, and the records go to ``TraceMetadata/leakScans``.
enum LeakRecords {
  static let scanTag: UInt8 = 0x10
  static let blockTag: UInt8 = 0x11
  static let edgeTag: UInt8 = 0x12
  static let graphTag: UInt8 = 0x13
  static let rootTag: UInt8 = 0x14
  static let nodeTag: UInt8 = 0x15

  /// A block's fields as LEAK_BLOCK and LEAK_NODE both carry them: its alloc id, address,
  /// size, stack and category.
  static func blockFields(from cursor: inout ByteCursor) throws -> (
    id: AllocID, address: Address, size: UInt64, stack: StackID, category: CategoryID
  ) {
    let serial = try cursor.readVarint()
    guard let threadSerial = UInt32(exactly: serial) else {
      throw ChunkCursor.MalformedRecord(detail: "thread serial \(serial) exceeds 32 bits")
    }
    return (
      AllocID(threadSerial: threadSerial, counter: try cursor.readVarint()),
      Address(try cursor.readVarint()), try cursor.readVarint(), StackID(try cursor.readVarint()),
      CategoryID(try cursor.readVarint())
    )
  }

  /// Decodes the record whose tag byte was just read. Throws ``ByteCursor/Failure`` when it
  /// runs short, ``ChunkCursor/MalformedRecord`` when a value is impossible. A block or edge
  /// whose LEAK_SCAN record has not been read yet starts the scan's entry; the record fills it
  /// in when it comes.
  static func decode(
    _ tag: RecordTag, from cursor: inout ByteCursor, into metadata: inout TraceMetadata
  ) throws {
    switch tag {
    case .leakScan:
      let id = try cursor.readVarint()
      var scan = LeakScan(
        id: id, time: try cursor.readVarint(),
        trigger: LeakScan.Trigger(rawValue: try cursor.readUInt8()))
      scan.flags = LeakScan.Flags(rawValue: try cursor.readUInt8())
      scan.threadsStopped = try cursor.readVarint()
      scan.threadsUnresponsive = try cursor.readVarint()
      scan.liveBlocks = try cursor.readVarint()
      scan.liveBytes = try cursor.readVarint()
      scan.rootBytes = try cursor.readVarint()
      scan.stopNanoseconds = try cursor.readVarint()
      scan.totalNanoseconds = try cursor.readVarint()
      scan.announcedBlocks = try cursor.readVarint()
      scan.announcedEdges = try cursor.readVarint()
      if let early = metadata.leakScans[id] {
        scan.blocks = early.blocks
        scan.blocksRead = early.blocksRead
        scan.edgesRead = early.edgesRead
        scan.edges = early.edges
        scan.graph = early.graph
      }
      if metadata.keepsLeakBlocks(of: id) {
        // Room for what the record announces, which may be millions: grown by doubling, the
        // arrays would take half as much again at their last copy. Address space only, until
        // filled; a damaged count is bounded.
        scan.blocks.reserveCapacity(Int(min(scan.announcedBlocks, 1 << 26)))
        scan.edges.reserveCapacity(Int(min(scan.announcedEdges, 1 << 26)))
      }
      metadata.leakScans[id] = scan
    case .leakBlock:
      let id = try cursor.readVarint()
      let kind = try cursor.readUInt8()
      guard let reachability = LeakedBlock.Reachability(rawValue: kind) else {
        throw ChunkCursor.MalformedRecord(detail: "unknown leak kind \(kind)")
      }
      let fields = try blockFields(from: &cursor)
      let block = LeakedBlock(
        id: fields.id, address: fields.address, size: fields.size, stack: fields.stack,
        category: fields.category, reachability: reachability)
      if metadata.keepsLeakBlocks(of: id) {
        metadata.leakScans[id, default: placeholder(id)].blocks.append(block)
      } else {
        metadata.leakScans[id, default: placeholder(id)].blocksRead += 1
      }
    case .leakGraph, .leakRoot, .leakNode:
      try ReachabilityRecords.decode(tag, from: &cursor, into: &metadata)
    case .leakFailed:
      let time = try cursor.readVarint()
      let trigger = LeakScan.Trigger(rawValue: try cursor.readUInt8())
      metadata.failedLeakScans.append(
        LeakScanFailure(time: time, trigger: trigger, errorNumber: try cursor.readVarint()))
    default:
      let id = try cursor.readVarint()
      let from = try cursor.readVarint()
      let to = try cursor.readVarint()
      let flags = try cursor.readUInt8()
      // Only the count is read: a copy of the scan held across the append below would share
      // its arrays, and every append would copy them whole (quadratic in a big scan).
      let limit =
        metadata.leakScans[id].map {
          max(UInt64($0.blocks.count), $0.blocksRead, $0.announcedBlocks)
        } ?? 0
      guard from < limit, to < limit, let from = Int(exactly: from), let to = Int(exactly: to)
      else {
        throw ChunkCursor.MalformedRecord(
          detail: "leak edge \(from) -> \(to) of scan \(id) names a block not written before it")
      }
      guard metadata.keepsLeakBlocks(of: id) else {
        metadata.leakScans[id, default: placeholder(id)].edgesRead += 1
        return
      }
      metadata.leakScans[id, default: placeholder(id)].edges.append(
        LeakEdge(from: from, to: to, isInterior: flags & 1 != 0))
    }
  }

  /// A scan whose LEAK_SCAN record is still to come: incomplete until it does.
  static func placeholder(_ id: UInt64) -> LeakScan {
    LeakScan(id: id, time: 0, trigger: LeakScan.Trigger(rawValue: 0))
  }

  /// Appends a scan's records, as the shim writes them, for ``ChunkBuilder/leakScan(_:)``.
  static func encode(_ scan: LeakScan, into payload: inout ByteWriter) -> UInt32 {
    payload.appendUInt8(scanTag)
    for value in [scan.id, scan.time] { payload.appendVarint(value) }
    payload.appendUInt8(scan.trigger.rawValue)
    payload.appendUInt8(scan.flags.rawValue)
    for value in [
      scan.threadsStopped, scan.threadsUnresponsive, scan.liveBlocks, scan.liveBytes,
      scan.rootBytes, scan.stopNanoseconds, scan.totalNanoseconds, UInt64(scan.blocks.count),
      UInt64(scan.edges.count),
    ] { payload.appendVarint(value) }
    for block in scan.blocks {
      payload.appendUInt8(blockTag)
      payload.appendVarint(scan.id)
      payload.appendUInt8(block.reachability.rawValue)
      payload.appendVarint(UInt64(block.id.threadSerial))
      for value in [
        block.id.counter, block.address.rawValue, block.size, block.stack.rawValue,
        UInt64(block.category.rawValue),
      ] { payload.appendVarint(value) }
    }
    for edge in scan.edges {
      payload.appendUInt8(edgeTag)
      for value in [scan.id, UInt64(edge.from), UInt64(edge.to)] { payload.appendVarint(value) }
      payload.appendUInt8(edge.isInterior ? 1 : 0)
    }
    let graph = scan.graph.map { ReachabilityRecords.encode($0, scan: scan.id, into: &payload) }
    return UInt32(1 + scan.blocks.count + scan.edges.count) + (graph ?? 0)
  }
}

extension ChunkBuilder {
  /// Appends a leak scan: its LEAK_SCAN record (announcing exactly the blocks and edges given)
  /// and one LEAK_BLOCK and LEAK_EDGE record for each of them.
  public mutating func leakScan(_ scan: LeakScan) {
    var scan = scan
    scan.announcedBlocks = UInt64(scan.blocks.count)
    scan.announcedEdges = UInt64(scan.edges.count)
    var bytes = ByteWriter()
    let records = LeakRecords.encode(scan, into: &bytes)
    appendRaw(bytes.bytes, records: records)
  }
}
