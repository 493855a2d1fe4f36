/// The tables a trace defines alongside its events: the stack trie, named categories and loaded
/// modules.
///
/// Records may come after the events that use them, so resolve stacks and names only once
/// the stream has been read to the end (or ``TraceEventStream/drainMetadata()`` has run).
///
/// ```swift
/// var stream = reader.events()
/// while let event = try stream.next() { … }
/// let frames = stream.metadata.frames(of: someStack)
/// ```
public struct TraceMetadata: Sendable {
  /// A node of the stack trie.
  public struct StackNode: Hashable, Sendable {
    /// The stack without this node's frame; ``StackID/empty`` for an outermost frame.
    public var parent: StackID
    /// The frame's return address.
    public var pc: UInt64
  }

  /// Every STACK record read so far, by id.
  public var stackNodes: [StackID: StackNode] {
    var all = farNodes
    for (id, node) in nearNodes.enumerated() {
      if let node { all[StackID(UInt64(id))] = node }
    }
    return all
  }
  /// STACK nodes by id. The shim numbers them from 1 as it makes them, so an array holds them,
  /// read for every frame of every stack an analysis lists; an id far past the array's end (a
  /// damaged trace, say) waits in `farNodes` instead of growing it without bound.
  private var nearNodes: [StackNode?] = []
  private var farNodes: [StackID: StackNode] = [:]
  /// Every CATEGORY record read so far, by id.
  public private(set) var namedCategories: [CategoryID: CategoryInfo] = [:]
  /// Each Swift class's name as its record gives it, and the classes of each such name.
  private var classNames: [CategoryID: String] = [:]
  private var classesNamed: [String: [CategoryID]] = [:]
  /// Every MODULE record read so far, oldest first; lookups prefer the latest.
  public private(set) var modules: [TraceModule] = []
  /// Every leak scan read so far, by its number: LEAK_SCAN records with their LEAK_BLOCK and
  /// LEAK_EDGE records.
  public internal(set) var leakScans: [UInt64: LeakScan] = [:]
  /// The leak scans that could not run (LEAK_FAILED records), in the order read.
  public internal(set) var failedLeakScans: [LeakScanFailure] = []
  /// Whether ``leakScans`` keep their blocks, edges and graphs, or only each scan's summary:
  /// a scan at the exit of a program with millions of live blocks writes a record for each, and
  /// the passes that do not show leaks would hold them all (``TraceReader/events(leakBlocks:)``).
  public internal(set) var keepsLeakBlocks = true
  /// Which scans keep their blocks, edges and graphs when ``keepsLeakBlocks`` is on: a trace
  /// scanned every 10 ms holds hundreds of scans, and `heapline leaks` shows one.
  public internal(set) var keptLeakScans = LeakScanSelection.all
  private var latestKeptScan: UInt64?

  /// Whether the records of scan `id` are kept; with ``LeakScanSelection/latest``, a newer scan
  /// makes the one kept so far forget its blocks, edges and graph (its counts stay).
  mutating func keepsLeakBlocks(of id: UInt64) -> Bool {
    guard keepsLeakBlocks else { return false }
    switch keptLeakScans {
    case .all: return true
    case .only(let kept): return id == kept
    case .latest:
      if let kept = latestKeptScan {
        if id < kept { return false }
        if id > kept { leakScans[kept]?.forgetBlocks() }
      }
      latestKeptScan = id
      return true
    }
  }
  /// Events that happened but could not be recorded, by reason (LOST records).
  public private(set) var lostEvents: [LostReason: UInt64] = [:]

  /// What every ALLOC of one size, stack and category shares (a version 5 INFO record).
  public struct AllocationInfo: Hashable, Sendable {
    /// The requested size in bytes.
    public var size: UInt64
    /// The allocating call stack.
    public var stack: StackID
    /// The blocks' category.
    public var category: CategoryID

    /// Creates an info.
    public init(size: UInt64, stack: StackID, category: CategoryID) {
      self.size = size
      self.stack = stack
      self.category = category
    }
  }

  /// INFO records read so far, by id: an ALLOC names one.
  private(set) var infos: [AllocationInfo?] = []
  /// PC records read so far: return addresses by number, which STACK nodes name.
  private var pcs: [UInt32: UInt64] = [:]
  /// STACK nodes whose PC record is not read yet (another thread's chunk may hold it), by the
  /// number they wait for.
  private var waitingForPC: [UInt32: [(id: StackID, parent: StackID)]] = [:]

  /// Creates empty tables.
  public init() {}

  /// Adds a STACK record.
  public mutating func addStack(_ id: StackID, parent: StackID, pc: UInt64) {
    let node = StackNode(parent: parent, pc: pc)
    let raw = id.rawValue
    if raw >= UInt64(nearNodes.count), raw < UInt64(nearNodes.count) * 2 + 65_536 {
      nearNodes.append(contentsOf: repeatElement(nil, count: Int(raw) + 1 - nearNodes.count))
    }
    if raw < UInt64(nearNodes.count) {
      nearNodes[Int(raw)] = node
      // One that waited there before the array reached it is replaced.
      if !farNodes.isEmpty { farNodes[id] = nil }
    } else {
      farNodes[id] = node
    }
  }

  /// The STACK node `id`, if one was read.
  @inline(__always)
  public func stackNode(_ id: StackID) -> StackNode? {
    if id.rawValue < UInt64(nearNodes.count), let node = nearNodes[Int(id.rawValue)] { return node }
    return farNodes.isEmpty ? nil : farNodes[id]
  }

  /// Adds a version 5 STACK node, which names its return address by PC number: resolved now,
  /// or when that PC record is read.
  mutating func addStack(_ id: StackID, parent: StackID, pcIndex: UInt32) {
    if let pc = pcs[pcIndex] {
      addStack(id, parent: parent, pc: pc)
    } else {
      waitingForPC[pcIndex, default: []].append((id, parent))
    }
  }

  /// Adds a PC record, and the STACK nodes that waited for it.
  mutating func addPC(_ pc: UInt64, index: UInt32) {
    pcs[index] = pc
    for node in waitingForPC.removeValue(forKey: index) ?? [] {
      addStack(node.id, parent: node.parent, pc: pc)
    }
  }

  /// Adds an INFO record; `false` when its id is past ``TraceConstants/infoLimit``.
  mutating func addInfo(_ info: AllocationInfo, id: UInt64) -> Bool {
    guard id < TraceConstants.infoLimit else { return false }
    let index = Int(id)
    if index >= infos.count {
      infos.append(
        contentsOf: repeatElement(nil, count: max(index + 1, infos.count * 2) - infos.count))
    }
    infos[index] = info
    return true
  }

  /// The info an ALLOC names, if an INFO record defined it.
  @inline(__always)
  func info(_ id: UInt64) -> AllocationInfo? {
    id < UInt64(infos.count) ? infos[Int(id)] : nil
  }

  /// Every return address that STACK and PC records name: what a symbolizer has to look up.
  public var returnAddresses: Set<UInt64> {
    Set(nearNodes.lazy.compactMap { $0?.pc }).union(farNodes.values.map(\.pc)).union(pcs.values)
  }

  /// Adds a LOST record's count.
  public mutating func addLost(_ count: UInt64, reason: LostReason) {
    lostEvents[reason, default: 0] &+= count
  }

  /// Adds a CATEGORY record; a later record for the same id replaces it.
  public mutating func addCategory(_ info: CategoryInfo) {
    if let old = classNames[info.id], old != info.name || info.kind != .swiftClass {
      classesNamed[old]?.removeAll { $0 == info.id }
      classNames[info.id] = nil
      tellApart(old)
    }
    namedCategories[info.id] = info
    guard info.kind == .swiftClass else { return }
    classNames[info.id] = info.name
    if !classesNamed[info.name, default: []].contains(info.id) {
      classesNamed[info.name, default: []].append(info.id)
      classesNamed[info.name]!.sort()
    }
    tellApart(info.name)
  }

  /// Swift classes that print alike (a private class of one name in each of two files, local
  /// classes of one name in two functions) are told apart by the order in which the program
  /// first made them, `App.Item #1` and `App.Item #2`: with one name, report printed two rows
  /// alike, timeline two columns of one header, and `objects --category` merged them.
  private mutating func tellApart(_ name: String) {
    let ids = classesNamed[name] ?? []
    for (rank, id) in ids.enumerated() {
      namedCategories[id]?.name = ids.count > 1 ? "\(name) #\(rank + 1)" : name
    }
  }

  /// Adds a MODULE record. A module written again after `dlopen` wins over older records
  /// covering the same addresses.
  public mutating func addModule(_ module: TraceModule) {
    modules.removeAll { $0 == module }
    modules.append(module)
  }

  /// The return addresses of a stack, innermost first.
  ///
  /// Stops at the root, at a node the trace never defined, or after `limit` frames, so a
  /// corrupt trie with a cycle cannot loop forever.
  public func frames(of stack: StackID, limit: Int = 4096) -> [UInt64] {
    var frames: [UInt64] = []
    var current = stack
    while current != .empty, frames.count < limit, let node = stackNode(current) {
      frames.append(node.pc)
      current = node.parent
    }
    return frames
  }

  /// The category's kind and name: size classes by rule, others from their CATEGORY record.
  public func category(_ id: CategoryID) -> CategoryInfo {
    if id.isSizeClass { return CategoryInfo(sizeClass: id) }
    return namedCategories[id]
      ?? CategoryInfo(id: id, kind: CategoryKind(rawValue: 0xFF), name: "Category \(id.rawValue)")
  }

  /// The latest module whose segments hold `pc`.
  public func module(containing pc: UInt64) -> TraceModule? {
    modules.last { $0.contains(pc) }
  }
}
