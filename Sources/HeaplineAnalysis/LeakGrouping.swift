import HeaplineTrace

/// Classifies a scan's blocks and groups them (``LeakReport``).
///
/// Unreachable blocks and possibly lost ones are grouped apart, each over the pointers among its
/// own kind. In each, the strongly connected components that nothing points into start the
/// groups: their blocks are definitely lost (or possibly lost), and every block reachable from
/// them joins the first group that reaches it, as indirectly lost. Groups whose starting blocks
/// have the same categories and stacks are merged; once their frames are symbolized,
/// ``mergedBySymbols(_:)`` merges those whose stacks read the same.
struct LeakGrouping {
  private(set) var groups: [LeakGroup] = []
  private var merged: [[LeakGroupSignature]: Int] = [:]

  init(scan: LeakScan, metadata: TraceMetadata) {
    for reachability in [LeakedBlock.Reachability.unreachable, .onlyThroughInteriorPointers] {
      let nodes = scan.blocks.indices.filter { scan.blocks[$0].reachability == reachability }
      group(nodes, of: scan, metadata: metadata, possibly: reachability != .unreachable)
    }
    groups.sort(by: Self.mostBytesFirst)
  }

  /// The groups' order: most bytes first, then by kind and name.
  static func mostBytesFirst(_ a: LeakGroup, _ b: LeakGroup) -> Bool {
    (b.total.bytes, a.kind.rawValue, a.name) < (a.total.bytes, b.kind.rawValue, b.name)
  }

  private mutating func group(
    _ nodes: [Int], of scan: LeakScan, metadata: TraceMetadata, possibly: Bool
  ) {
    guard !nodes.isEmpty else { return }
    var local = [Int: Int]()
    for (position, node) in nodes.enumerated() { local[node] = position }
    let edges = scan.edges.compactMap { edge -> (from: Int, to: Int)? in
      guard let from = local[edge.from], let to = local[edge.to] else { return nil }  // or torn
      return (from, to)
    }
    let graph = LeakGraph(nodeCount: nodes.count, edges: edges)
    var owner = [Int](repeating: -1, count: nodes.count)
    let sources = graph.sourceComponents.sorted {
      graph.components[$0][0] < graph.components[$1][0]
    }
    for (number, component) in sources.enumerated() {
      for member in graph.components[component] { owner[member] = number }
    }
    var instances: [(heads: [Int], indirect: [Int])] = sources.map { (graph.components[$0], []) }
    // Breadth first from each start in turn: a block reached from two starts joins the first.
    for (number, component) in sources.enumerated() {
      var queue = graph.components[component]
      var head = 0
      while head < queue.count {
        let node = queue[head]
        head += 1
        for next in graph.successors[node] where owner[next] < 0 {
          owner[next] = number
          instances[number].indirect.append(next)
          queue.append(next)
        }
      }
    }
    for (number, component) in sources.enumerated() {
      let isCycle = graph.isCycle(component)
      add(
        heads: instances[number].heads, indirect: instances[number].indirect, graph: graph,
        isCycle: isCycle, nodes: nodes, scan: scan, metadata: metadata, possibly: possibly)
    }
  }

  private mutating func add(
    heads: [Int], indirect: [Int], graph: LeakGraph, isCycle: Bool, nodes: [Int],
    scan: LeakScan, metadata: TraceMetadata, possibly: Bool
  ) {
    func member(_ local: Int) -> LeakGroupMember {
      let block = scan.blocks[nodes[local]]
      return LeakGroupMember(
        id: block.id, address: block.address, size: block.size,
        category: metadata.category(block.category), stack: block.stack)
    }
    var order = heads
    if isCycle {
      // Named from the class instance allocated first (the owner, which made the others), or
      // the block allocated first when there is none. Alloc ids order a thread's allocations.
      func rank(_ local: Int) -> (Int, UInt32, UInt64) {
        let block = scan.blocks[nodes[local]]
        let isClass = metadata.category(block.category).kind == .swiftClass
        return (isClass ? 0 : 1, block.id.threadSerial, block.id.counter)
      }
      let start = heads.min { rank($0) < rank($1) }!
      let cycle = graph.shortestCycle(through: start)
      order = cycle + heads.filter { !cycle.contains($0) }
    }
    let members = order.map(member)
    let kind: LeakGroup.Kind = possibly ? .possiblyLost : isCycle ? .cycle : .rootLeak
    var startAmount = LeakAmount()
    var indirectAmount = LeakAmount()
    for head in heads { startAmount.add(size: scan.blocks[nodes[head]].size) }
    for node in indirect { indirectAmount.add(size: scan.blocks[nodes[node]].size) }
    let signature =
      [LeakGroupSignature(kind: kind)]
      + members.map { LeakGroupSignature(category: $0.category.id, stack: $0.stack) }.sorted()
    if let existing = merged[signature] {
      groups[existing].instances += 1
      if possibly {
        groups[existing].possiblyLost.add(startAmount)
        groups[existing].possiblyLost.add(indirectAmount)
      } else {
        groups[existing].definitelyLost.add(startAmount)
        groups[existing].indirectlyLost.add(indirectAmount)
      }
      return
    }
    var name = members.first?.shortName ?? ""
    if isCycle {
      let cycleLength = graph.shortestCycle(through: order[0]).count
      name = (members.prefix(cycleLength) + [members[0]]).map(\.shortName)
        .joined(separator: " → ")
    }
    var group = LeakGroup(kind: kind, name: name, instances: 1, members: members)
    if possibly {
      group.possiblyLost = startAmount
      group.possiblyLost.add(indirectAmount)
    } else {
      group.definitelyLost = startAmount
      group.indirectlyLost = indirectAmount
    }
    merged[signature] = groups.count
    groups.append(group)
  }
}

extension LeakGrouping {
  /// `groups` (their members' frames symbolized), with the groups that a reader cannot tell
  /// apart merged: the same kind, and starting blocks of the same categories whose shown frames
  /// have the same functions and source lines. An optimized build's copies of one allocation
  /// (a loop unrolled, a function inlined twice) differ only in return addresses; a frame
  /// without a symbol still counts by its address. Most bytes first.
  static func mergedBySymbols(_ groups: [LeakGroup]) -> [LeakGroup] {
    var merged: [LeakGroup] = []
    var seen: [[String]: Int] = [:]
    for group in groups {
      let key =
        [group.kind.rawValue]
        + group.members.map { member in
          let frames = FrameRole.userFrames(member.frames).map {
            $0.displayName + " " + ($0.sourceLocation ?? "")
          }
          return "\(member.category.id.rawValue)|" + frames.joined(separator: "|")
        }.sorted()
      guard let existing = seen[key] else {
        seen[key] = merged.count
        merged.append(group)
        continue
      }
      merged[existing].instances += group.instances
      merged[existing].definitelyLost.add(group.definitelyLost)
      merged[existing].indirectlyLost.add(group.indirectlyLost)
      merged[existing].possiblyLost.add(group.possiblyLost)
    }
    return merged.sorted(by: mostBytesFirst)
  }
}

/// What makes two leaks the same: their kind, and their starting blocks' categories and stacks.
private struct LeakGroupSignature: Hashable, Comparable {
  var kind = ""
  var category: UInt64 = 0
  var stack: UInt64 = 0

  init(kind: LeakGroup.Kind) { self.kind = kind.rawValue }
  init(category: CategoryID, stack: StackID) {
    self.category = category.rawValue
    self.stack = stack.rawValue
  }

  static func < (lhs: Self, rhs: Self) -> Bool {
    (lhs.kind, lhs.category, lhs.stack) < (rhs.kind, rhs.category, rhs.stack)
  }
}
