/// One leak scan as the trace recorded it: when it ran, what it examined, and every block it
/// could not reach, with the pointers between those blocks.
///
/// The shim writes a scan as a LEAK_SCAN record followed by its LEAK_BLOCK and LEAK_EDGE
/// records (<doc:TraceFormat>). ``TraceMetadata/leakScans`` collects them as the trace is read;
/// `HeaplineAnalysis`'s `LeakReport` classifies the blocks and finds roots and cycles.
///
/// ```swift
/// var stream = reader.events()
/// try stream.drainMetadata()
/// let last = stream.metadata.leakScans.values.max { $0.id < $1.id }
/// last?.blocks.count  // blocks found lost or possibly lost
/// ```
public struct LeakScan: Hashable, Sendable {
  /// What started a scan.
  public struct Trigger: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
    /// The trigger byte as written.
    public var rawValue: UInt8
    /// Wraps a trigger byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The process exited (`heapline record --leaks`).
    public static let exit = Trigger(rawValue: 1)
    /// A signal was sent to the process (`--leaks-signal`).
    public static let signal = Trigger(rawValue: 2)
    /// The periodic timer (`--leaks-every`).
    public static let timer = Trigger(rawValue: 3)
    /// The API: `heapline_check_leaks()` or `Heapline.checkLeaks()`.
    public static let api = Trigger(rawValue: 4)

    /// `exit`, `signal`, `timer` or `api`.
    public var description: String {
      switch rawValue {
      case 1: "exit"
      case 2: "signal"
      case 3: "timer"
      case 4: "api"
      default: "trigger \(rawValue)"
      }
    }
  }

  /// Facts about how a scan ran, from the LEAK_SCAN record's flags byte.
  public struct Flags: OptionSet, Hashable, Sendable {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// Heap chunks that the live table did not know were scanned as roots.
    public static let untrackedHeapScanned = Flags(rawValue: 1)
    /// Some threads did not answer the stop signal; their stacks were scanned whole.
    public static let unresponsiveThreads = Flags(rawValue: 2)
    /// Modules were loaded or unloaded during all three attempts.
    public static let modulesChanged = Flags(rawValue: 4)
  }

  /// The scan's number within the recording: 1, 2, 3…
  public var id: UInt64
  /// Nanoseconds since the trace's start time, when the world was stopped.
  public var time: UInt64
  /// What started the scan.
  public var trigger: Trigger
  /// How the scan ran.
  public var flags: Flags
  /// Threads stopped, and threads that did not answer.
  public var threadsStopped: UInt64
  public var threadsUnresponsive: UInt64
  /// The live blocks and bytes the scan examined.
  public var liveBlocks: UInt64
  public var liveBytes: UInt64
  /// Bytes of roots scanned: module data, stacks, registers, TLS, registered regions.
  public var rootBytes: UInt64
  /// How long the other threads stood stopped, and how long the whole scan took.
  public var stopNanoseconds: UInt64
  public var totalNanoseconds: UInt64
  /// The numbers of LEAK_BLOCK and LEAK_EDGE records the LEAK_SCAN record announced.
  public var announcedBlocks: UInt64
  /// The LEAK_BLOCK and LEAK_EDGE records read and not kept in ``blocks`` and ``edges``, by a
  /// stream without leak blocks (``TraceMetadata/keepsLeakBlocks``); 0 when they are kept.
  public internal(set) var blocksRead: UInt64 = 0
  public internal(set) var edgesRead: UInt64 = 0
  public var announcedEdges: UInt64
  /// The blocks found, in the order written; ``LeakEdge`` names them by index here.
  public var blocks: [LeakedBlock] = []
  /// Pointers between found blocks.
  public var edges: [LeakEdge] = []
  /// How the scan reached every live block, when it was recorded with `--graph`.
  public var graph: ReachabilityGraph?

  /// Creates a scan with no blocks or edges yet.
  public init(
    id: UInt64, time: UInt64, trigger: Trigger, flags: Flags = [], threadsStopped: UInt64 = 0,
    threadsUnresponsive: UInt64 = 0, liveBlocks: UInt64 = 0, liveBytes: UInt64 = 0,
    rootBytes: UInt64 = 0, stopNanoseconds: UInt64 = 0, totalNanoseconds: UInt64 = 0,
    announcedBlocks: UInt64 = 0, announcedEdges: UInt64 = 0
  ) {
    self.id = id
    self.time = time
    self.trigger = trigger
    self.flags = flags
    self.threadsStopped = threadsStopped
    self.threadsUnresponsive = threadsUnresponsive
    self.liveBlocks = liveBlocks
    self.liveBytes = liveBytes
    self.rootBytes = rootBytes
    self.stopNanoseconds = stopNanoseconds
    self.totalNanoseconds = totalNanoseconds
    self.announcedBlocks = announcedBlocks
    self.announcedEdges = announcedEdges
  }

  /// Drops the blocks, edges and graph kept so far, counting them as read; a graph dropped
  /// leaves its announced counts, which say the scan kept one.
  mutating func forgetBlocks() {
    blocksRead += UInt64(blocks.count)
    edgesRead += UInt64(edges.count)
    blocks = []
    edges = []
    graph = graph.map {
      ReachabilityGraph(announcedRoots: $0.announcedRoots, announcedNodes: $0.announcedNodes)
    }
  }

  /// Whether every announced block and edge was read: a trace cut short may end mid-scan.
  public var isComplete: Bool {
    max(UInt64(blocks.count), blocksRead) == announcedBlocks
      && max(UInt64(edges.count), edgesRead) == announcedEdges
  }
}

/// A block that a leak scan reported, from a LEAK_BLOCK record.
public struct LeakedBlock: Hashable, Sendable {
  /// How the scan found a block.
  public enum Reachability: UInt8, Hashable, Sendable {
    /// No path from the roots reaches it.
    case unreachable = 1
    /// Only paths through a pointer into the middle of some block reach it.
    case onlyThroughInteriorPointers = 2
  }

  /// The allocation's id, which its ALLOC record also carries.
  public var id: AllocID
  public var address: Address
  public var size: UInt64
  /// The allocating stack.
  public var stack: StackID
  /// The block's category at the time of the scan.
  public var category: CategoryID
  public var reachability: Reachability

  /// Creates a reported block.
  public init(
    id: AllocID, address: Address, size: UInt64, stack: StackID, category: CategoryID,
    reachability: Reachability
  ) {
    self.id = id
    self.address = address
    self.size = size
    self.stack = stack
    self.category = category
    self.reachability = reachability
  }
}

/// A pointer from one reported block to another, from a LEAK_EDGE record.
public struct LeakEdge: Hashable, Sendable {
  /// Indices into ``LeakScan/blocks``.
  public var from: Int
  public var to: Int
  /// Whether the pointer points into the middle of its target.
  public var isInterior: Bool

  /// Creates an edge.
  public init(from: Int, to: Int, isInterior: Bool = false) {
    self.from = from
    self.to = to
    self.isInterior = isInterior
  }
}

/// The leak scans whose blocks, edges and graphs a pass keeps (``TraceReader/events(leakBlocks:keeping:)``).
public enum LeakScanSelection: Hashable, Sendable {
  /// Every scan's.
  case all
  /// The scan with the highest number read so far: each newer one replaces it.
  case latest
  /// The scan with this number only.
  case only(UInt64)
}
