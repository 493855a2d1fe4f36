/// Decoding and encoding of a scan's reachability graph, tags `0x13` to `0x15`
/// (<doc:TraceFormat>): LEAK_GRAPH announces the roots and nodes that follow, then a LEAK_ROOT
/// for each root region and a LEAK_NODE for each block reached, breadth first.
enum ReachabilityRecords {
  /// Decodes the record whose tag byte was just read into its scan's ``LeakScan/graph``.
  static func decode(
    _ tag: RecordTag, from cursor: inout ByteCursor, into metadata: inout TraceMetadata
  ) throws {
    let id = try cursor.readVarint()
    // A pass without leak blocks reads each record whole and keeps none of it.
    switch tag {
    case .leakGraph:
      let roots = try cursor.readVarint()
      let nodes = try cursor.readVarint()
      guard metadata.keepsLeakBlocks(of: id) else { return }
      metadata.leakScans[id, default: LeakRecords.placeholder(id)].graph = ReachabilityGraph(
        announcedRoots: roots, announcedNodes: nodes)
    case .leakRoot:
      let raw = try cursor.readUInt8()
      guard let kind = ReachabilityGraph.RootKind(rawValue: raw) else {
        throw ChunkCursor.MalformedRecord(detail: "unknown root kind \(raw)")
      }
      let thread = UInt32(truncatingIfNeeded: try cursor.readVarint())
      let root = ReachabilityGraph.Root(
        kind: kind, thread: thread, start: Address(try cursor.readVarint()),
        end: Address(try cursor.readVarint()))
      guard metadata.keepsLeakBlocks(of: id) else { return }
      try graphless(id, metadata)
      metadata.leakScans[id]!.graph!.roots.append(root)
    default:
      let block = try LeakRecords.blockFields(from: &cursor)
      let parent = try cursor.readVarint()
      let offset = try cursor.readVarint()
      guard metadata.keepsLeakBlocks(of: id) else { return }
      try graphless(id, metadata)
      // Only the counts are read: a copy of the graph held across the append below would share
      // its arrays, and every append would copy them whole (quadratic in a big graph).
      let (nodes, roots) = metadata.leakScans[id].flatMap(\.graph).map {
        (UInt64($0.nodes.count), UInt64($0.roots.count))
      }!
      guard parent & 1 == 1 ? parent >> 1 < roots : parent >> 1 < nodes else {
        throw ChunkCursor.MalformedRecord(
          detail: "graph node \(nodes) of scan \(id) names a parent not written before it")
      }
      let index = Int(parent >> 1)
      metadata.leakScans[id]!.graph!.nodes.append(
        ReachabilityGraph.Node(
          id: block.id, address: block.address, size: block.size, stack: block.stack,
          category: block.category,
          parent: parent & 1 == 1 ? .root(index) : .node(index), offset: offset))
    }
  }

  /// Throws unless scan `id`'s LEAK_GRAPH record came before.
  private static func graphless(_ id: UInt64, _ metadata: TraceMetadata) throws {
    guard metadata.leakScans[id]?.graph == nil else { return }
    throw ChunkCursor.MalformedRecord(detail: "graph record of scan \(id) before its LEAK_GRAPH")
  }

  /// Appends a graph's records, as the shim writes them; returns how many.
  static func encode(_ graph: ReachabilityGraph, scan: UInt64, into payload: inout ByteWriter)
    -> UInt32
  {
    payload.appendUInt8(LeakRecords.graphTag)
    for value in [scan, UInt64(graph.roots.count), UInt64(graph.nodes.count)] {
      payload.appendVarint(value)
    }
    for root in graph.roots {
      payload.appendUInt8(LeakRecords.rootTag)
      payload.appendVarint(scan)
      payload.appendUInt8(root.kind.rawValue)
      for value in [UInt64(root.thread), root.start.rawValue, root.end.rawValue] {
        payload.appendVarint(value)
      }
    }
    for node in graph.nodes {
      payload.appendUInt8(LeakRecords.nodeTag)
      let parent: UInt64
      switch node.parent {
      case .root(let index): parent = UInt64(index) << 1 | 1
      case .node(let index): parent = UInt64(index) << 1
      }
      for value in [
        scan, UInt64(node.id.threadSerial), node.id.counter, node.address.rawValue, node.size,
        node.stack.rawValue, UInt64(node.category.rawValue), parent, node.offset,
      ] { payload.appendVarint(value) }
    }
    return UInt32(1 + graph.roots.count + graph.nodes.count)
  }
}
