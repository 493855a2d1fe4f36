/// How a leak scan recorded with `heapline record --graph` reached every live block: for each
/// block, the block or root that reached it first in a breadth-first flood from all the roots,
/// and where in that holder the pointer lies. Following parents from a block gives a shortest
/// path from a root to it: what keeps it alive.
///
/// The shim writes it after the scan's leak records, as a LEAK_GRAPH record, then LEAK_ROOT and
/// LEAK_NODE records (<doc:TraceFormat>); ``LeakScan/graph`` holds it.
///
/// ```swift
/// let graph = scan.graph!
/// let node = graph.nodes[7]
/// if case .node(let holder) = node.parent {
///   graph.nodes[holder].category  // what holds node 7, at byte node.offset
/// }
/// ```
public struct ReachabilityGraph: Hashable, Sendable {
  /// What a root region is.
  public enum RootKind: UInt8, Hashable, Sendable {
    /// A loaded module's writable segment: its globals and statics.
    case global = 1
    /// A thread's stack, from its stack pointer up.
    case stack = 2
    /// A thread's registers, as the scan saved them.
    case registers = 3
    /// A thread's static TLS and thread descriptor.
    case threadLocal = 4
    /// A region the program registered (`heapline_register_root`).
    case region = 5
    /// Another writable private mapping (anonymous memory the program mapped).
    case mapping = 6
    /// A block of the runtimes' own (the Swift metadata allocator's pools, glibc's thread
    /// vectors).
    case runtime = 7
    /// A heap chunk that the recording did not see allocated.
    case heap = 8
  }

  /// A root region the scan read.
  public struct Root: Hashable, Sendable {
    public var kind: RootKind
    /// The thread, for a stack, registers or TLS; 0 otherwise.
    public var thread: UInt32
    /// The region. For registers, where the scan saved them: a pointer's offset from
    /// ``start`` is the register's number times 8.
    public var start: Address
    public var end: Address

    /// Creates a root.
    public init(kind: RootKind, thread: UInt32 = 0, start: Address, end: Address) {
      self.kind = kind
      self.thread = thread
      self.start = start
      self.end = end
    }
  }

  /// What first reached a node.
  public enum Parent: Hashable, Sendable {
    /// A root: an index into ``roots``.
    case root(Int)
    /// A block: an index into ``nodes``, always below the node's own.
    case node(Int)
  }

  /// A live block the scan reached.
  public struct Node: Hashable, Sendable {
    public var id: AllocID
    public var address: Address
    public var size: UInt64
    public var stack: StackID
    /// The block's category at the time of the scan.
    public var category: CategoryID
    public var parent: Parent
    /// Where the pointer to this block lies: its byte offset in the parent block, or its
    /// address in the parent root.
    public var offset: UInt64

    /// Creates a node.
    public init(
      id: AllocID, address: Address, size: UInt64, stack: StackID, category: CategoryID,
      parent: Parent, offset: UInt64
    ) {
      self.id = id
      self.address = address
      self.size = size
      self.stack = stack
      self.category = category
      self.parent = parent
      self.offset = offset
    }
  }

  /// The numbers of LEAK_ROOT and LEAK_NODE records the LEAK_GRAPH record announced.
  public var announcedRoots: UInt64
  public var announcedNodes: UInt64
  /// The root regions, in the order scanned.
  public var roots: [Root] = []
  /// The blocks reached, breadth first: a node's parent node comes before it.
  public var nodes: [Node] = []

  /// Creates a graph with the counts its LEAK_GRAPH record announces.
  public init(announcedRoots: UInt64 = 0, announcedNodes: UInt64 = 0) {
    self.announcedRoots = announcedRoots
    self.announcedNodes = announcedNodes
  }

  /// Whether every announced root and node was read.
  public var isComplete: Bool {
    UInt64(roots.count) == announcedRoots && UInt64(nodes.count) == announcedNodes
  }

  /// The path from a root to node `index`: the root, then each node from the one the root
  /// holds down to `index` itself.
  public func path(to index: Int) -> (root: Int, nodes: [Int]) {
    // A node's parent node comes before it (the reader checks), so this ends.
    var chain = [index]
    while true {
      switch nodes[chain[chain.count - 1]].parent {
      case .node(let parent): chain.append(parent)
      case .root(let root): return (root, chain.reversed())
      }
    }
  }
}
