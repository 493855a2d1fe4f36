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
  public private(set) var stackNodes: [StackID: StackNode] = [:]
  /// Every CATEGORY record read so far, by id.
  public private(set) var namedCategories: [CategoryID: CategoryInfo] = [:]
  /// Every MODULE record read so far, oldest first; lookups prefer the latest.
  public private(set) var modules: [TraceModule] = []
  /// Every leak scan read so far, by its number: LEAK_SCAN records with their LEAK_BLOCK and
  /// LEAK_EDGE records.
  public internal(set) var leakScans: [UInt64: LeakScan] = [:]
  /// Events that happened but could not be recorded, by reason (LOST records).
  public private(set) var lostEvents: [LostReason: UInt64] = [:]

  /// Creates empty tables.
  public init() {}

  /// Adds a STACK record.
  public mutating func addStack(_ id: StackID, parent: StackID, pc: UInt64) {
    stackNodes[id] = StackNode(parent: parent, pc: pc)
  }

  /// Adds a LOST record's count.
  public mutating func addLost(_ count: UInt64, reason: LostReason) {
    lostEvents[reason, default: 0] &+= count
  }

  /// Adds a CATEGORY record; a later record for the same id replaces it.
  public mutating func addCategory(_ info: CategoryInfo) {
    namedCategories[info.id] = info
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
    while current != .empty, frames.count < limit, let node = stackNodes[current] {
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
