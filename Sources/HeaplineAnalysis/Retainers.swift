import HeaplineTrace

/// Why the live objects of a category are still alive, as Xcode's Memory Graph answers it: for
/// each object, the shortest path of pointers from a root (a global, a thread's stack or
/// registers, a registered region) down to it, with identical paths grouped and counted.
///
/// It needs a scan recorded with `heapline record --graph`.
///
/// ```swift
/// let report = try Retainers.read(path: "app.trace", category: "MyApp.Image", symbolizer: nil)
/// report.paths[0].root.name   // "MyApp.cache"
/// report.paths[0].steps.map(\.category)  // ["Swift._DictionaryStorage<…>"]
/// report.paths[0].count       // 1 (each image has a bucket of its own)
/// ```
public struct Retainers: Sendable {
  /// A root a path starts at: its kind, and a name that says which one.
  public struct Root: Hashable, Sendable {
    public var kind: ReachabilityGraph.RootKind
    /// The global's symbol (`MyApp.cache`, a C global's name, or `module+0x3230` without
    /// one); `thread 1234` for a stack, registers or TLS; the region's address otherwise.
    public var name: String
    /// Where the pointer lies in the root: its offset in the global's symbol or the registered
    /// region, or the register's number times 8; `nil` for a stack or TLS, whose layout
    /// changes, and for a global without a symbol, whose name holds its address.
    public var offset: UInt64?
  }

  /// A block on the path that holds the next one: its category, and the offset of the field
  /// that holds the pointer.
  public struct Step: Hashable, Sendable {
    public var category: String
    public var offset: UInt64
  }

  /// Identical paths to objects of the category: the same root, the same categories with the
  /// same field offsets.
  public struct Path: Hashable, Sendable {
    public var root: Root
    /// The blocks between the root and the object, from the one the root holds: of a path of
    /// more than ``Retainers/keptSteps``, the first and the last half of that many.
    public var steps: [Step]
    /// The steps left out between those halves.
    public var stepsLeftOut = 0
    /// How many objects it leads to, and their bytes.
    public var count: Int
    public var bytes: UInt64
  }

  /// The trace's path.
  public var path: String
  /// The scan the paths come from.
  public var scan: LeakScan
  /// The category asked for.
  public var category: String
  /// Its live objects that the scan reached, and their bytes.
  public var objects: Int
  public var bytes: UInt64
  /// Most objects first.
  public var paths: [Path]
  /// Its live objects that no root reached, lost or possibly lost: `heapline leaks` shows them.
  public var unreached: Int

  /// The paths to `category`'s objects in `scan`, whose graph must be present; `symbolizer`
  /// names globals (without one, they are named by module and offset).
  public init(
    scan: LeakScan, category: String, metadata: TraceMetadata, path: String,
    symbolizer: Symbolizer?
  ) {
    self.path = path
    self.scan = scan
    self.category = category
    let graph = scan.graph ?? ReachabilityGraph()
    let targets = graph.nodes.indices.filter {
      metadata.category(graph.nodes[$0].category).name == category
    }
    let chains = Self.shortChains(to: targets, in: graph)
    let globals = chains.compactMap { chain -> UInt64? in
      graph.roots[chain.root].kind == .global ? graph.nodes[chain.nodes[0]].offset : nil
    }
    let symbols = symbolizer?.symbolizeData(globals, modules: metadata.modules) ?? [:]
    var grouped: [Path] = []
    var index: [Path: Int] = [:]
    for chain in chains {
      let first = graph.nodes[chain.nodes[0]]
      let root = Self.root(graph.roots[chain.root], at: first.offset, symbols, metadata)
      func steps(_ nodes: ArraySlice<Int>) -> [Step] {
        zip(nodes, nodes.dropFirst()).map { holder, held in
          Step(
            category: metadata.category(graph.nodes[holder].category).name,
            offset: graph.nodes[held].offset)
        }
      }
      let shown =
        chain.leftOut == 0
        ? steps(chain.nodes[...])
        : steps(chain.nodes.prefix(Self.keptSteps / 2 + 1))
          + steps(chain.nodes.suffix(Self.keptSteps / 2 + 1))
      let key = Path(root: root, steps: shown, stepsLeftOut: chain.leftOut, count: 0, bytes: 0)
      let size = graph.nodes[chain.nodes[chain.nodes.count - 1]].size
      if let at = index[key] {
        grouped[at].count += 1
        grouped[at].bytes += size
      } else {
        index[key] = grouped.count
        grouped.append(
          Path(root: root, steps: shown, stepsLeftOut: chain.leftOut, count: 1, bytes: size))
      }
    }
    objects = chains.count
    bytes = grouped.reduce(0) { $0 + $1.bytes }
    unreached = scan.blocks.count { metadata.category($0.category).name == category }
    paths = grouped.enumerated().sorted {
      ($1.element.count, $0.offset) < ($0.element.count, $1.offset)
    }.map(\.element)
  }

  /// Steps a path shows at most: the first and the last half of them.
  public static let keptSteps = 32

  /// For each target, its root and the nodes of its path, all of them when there are at most
  /// `keptSteps` steps, else the first and the last `keptSteps / 2 + 1` (the steps between
  /// counted in `leftOut`). One pass over the graph gives each node its depth and its ancestor
  /// at depth `keptSteps / 2` (parents come first), so no path is walked whole: built whole for
  /// each object of a list of N, the paths took N² steps (10,000 nodes: 18 s and 4 GB).
  static func shortChains(to targets: [Int], in graph: ReachabilityGraph)
    -> [(root: Int, nodes: [Int], leftOut: Int)]
  {
    let half = keptSteps / 2
    var depth = [Int32](repeating: 0, count: graph.nodes.count)
    var top = [Int32](repeating: 0, count: graph.nodes.count)
    for node in graph.nodes.indices {
      if case .node(let parent) = graph.nodes[node].parent, parent < node {
        depth[node] = depth[parent] + 1
        top[node] = depth[node] <= half ? Int32(node) : top[parent]
      } else {
        top[node] = Int32(node)
      }
    }
    return targets.map { target in
      let steps = Int(depth[target])
      guard steps > keptSteps else {
        let chain = graph.path(to: target)
        return (chain.root, chain.nodes, 0)
      }
      let head = graph.path(to: Int(top[target]))
      var tail = [target]
      for _ in 0..<half {
        guard case .node(let parent) = graph.nodes[tail[tail.count - 1]].parent else { break }
        tail.append(parent)
      }
      return (head.root, head.nodes + tail.reversed(), steps - 2 * half)
    }
  }

  /// Names a root, from the address of the pointer in it.
  private static func root(
    _ root: ReachabilityGraph.Root, at address: UInt64,
    _ symbols: [UInt64: Symbolizer.DataSymbol], _ metadata: TraceMetadata
  ) -> Root {
    switch root.kind {
    case .global:
      if let symbol = symbols[address] {
        return Root(kind: .global, name: symbol.name, offset: symbol.offset)
      }
      guard let module = metadata.modules.last(where: { $0.contains(address) }) else {
        return Root(kind: .global, name: "0x" + String(address, radix: 16), offset: nil)
      }
      let name = module.name + "+0x" + String(module.fileAddress(of: address), radix: 16)
      return Root(kind: .global, name: name, offset: nil)
    case .stack, .threadLocal:
      return Root(kind: root.kind, name: "thread \(root.thread)", offset: nil)
    case .registers:
      return Root(
        kind: .registers, name: "thread \(root.thread)", offset: address - root.start.rawValue)
    default:
      return Root(
        kind: root.kind, name: "0x" + String(root.start.rawValue, radix: 16),
        offset: address - root.start.rawValue)
    }
  }
}
