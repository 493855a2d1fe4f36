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
    // Each block's place among the blocks of its kind, -1 when it is of the other kind
    var local = [Int32](repeating: -1, count: scan.blocks.count)
    for reachability in [LeakedBlock.Reachability.unreachable, .onlyThroughInteriorPointers] {
      var nodes: [Int32] = []
      for (index, block) in scan.blocks.enumerated() {
        if block.reachability == reachability {
          local[index] = Int32(nodes.count)
          nodes.append(Int32(index))
        } else {
          local[index] = -1
        }
      }
      group(
        nodes, local: local, of: scan, metadata: metadata, possibly: reachability != .unreachable)
    }
    groups.sort(by: Self.mostBytesFirst)
  }

  /// The groups' order: most bytes first, then by kind and name.
  static func mostBytesFirst(_ a: LeakGroup, _ b: LeakGroup) -> Bool {
    (b.total.bytes, a.kind.rawValue, a.name) < (a.total.bytes, b.kind.rawValue, b.name)
  }

  private mutating func group(
    _ nodes: [Int32], local: [Int32], of scan: LeakScan, metadata: TraceMetadata, possibly: Bool
  ) {
    guard !nodes.isEmpty else { return }
    let edges = scan.edges.lazy.filter {  // a torn scan's edges may name blocks it lacks
      $0.from < local.count && $0.to < local.count && local[$0.from] >= 0 && local[$0.to] >= 0
    }.map { (Int(local[$0.from]), Int(local[$0.to])) }
    let graph = LeakGraph(nodeCount: nodes.count, edges: edges)
    let sources = graph.sourceComponents.sorted {
      graph.members(of: $0).first! < graph.members(of: $1).first!
    }
    var owner = [Int32](repeating: -1, count: nodes.count)
    for (number, component) in sources.enumerated() {
      for member in graph.members(of: component) { owner[Int(member)] = Int32(number) }
    }
    // Breadth first from each start in turn: a block reached from two starts joins the first.
    var queue: [Int32] = []
    for (number, component) in sources.enumerated() {
      queue.removeAll(keepingCapacity: true)
      queue.append(contentsOf: graph.members(of: component))
      var indirect = LeakAmount()
      var head = 0
      while head < queue.count {
        let node = Int(queue[head])
        head += 1
        for next in graph.successors(of: node) where owner[Int(next)] < 0 {
          owner[Int(next)] = Int32(number)
          indirect.add(size: scan.blocks[Int(nodes[Int(next)])].size)
          queue.append(next)
        }
      }
      add(
        heads: graph.members(of: component).map(Int.init), indirect: indirect, graph: graph,
        isCycle: graph.isCycle(component), nodes: nodes, scan: scan, metadata: metadata,
        possibly: possibly)
    }
  }

  private mutating func add(
    heads: [Int], indirect indirectAmount: LeakAmount, graph: LeakGraph, isCycle: Bool,
    nodes: [Int32], scan: LeakScan, metadata: TraceMetadata, possibly: Bool
  ) {
    func member(_ local: Int) -> LeakGroupMember {
      let block = scan.blocks[Int(nodes[local])]
      return LeakGroupMember(
        id: block.id, address: block.address, size: block.size,
        category: metadata.category(block.category), stack: block.stack)
    }
    var order = heads
    var cycleLength = 0
    if isCycle {
      // Named from the class instance allocated first (the owner, which made the others), or
      // the block allocated first when there is none. Alloc ids order a thread's allocations.
      func rank(_ local: Int) -> (Int, UInt32, UInt64) {
        let block = scan.blocks[Int(nodes[local])]
        let isClass = metadata.category(block.category).kind == .swiftClass
        return (isClass ? 0 : 1, block.id.threadSerial, block.id.counter)
      }
      let start = heads.min { rank($0) < rank($1) }!
      let cycle = graph.shortestCycle(through: start)
      cycleLength = cycle.count
      var inCycle = [Bool](repeating: false, count: nodes.count)
      for node in cycle { inCycle[node] = true }
      order = cycle + heads.filter { !inCycle[$0] }
    }
    // A lost ring of millions of blocks starts at all of them: the group keeps the first few,
    // and counts the rest.
    let members = order.prefix(Self.keptMembers).map(member)
    let kind: LeakGroup.Kind = possibly ? .possiblyLost : isCycle ? .cycle : .rootLeak
    var startAmount = LeakAmount()
    for head in heads { startAmount.add(size: scan.blocks[Int(nodes[head])].size) }
    let signature =
      [LeakGroupSignature(kind: kind)]
      + order.map { local in
        let block = scan.blocks[Int(nodes[local])]
        return LeakGroupSignature(
          category: metadata.category(block.category).id, stack: block.stack)
      }.sorted()
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
      name = Self.cycleName(length: cycleLength) { member(order[$0]).shortName }
    }
    var group = LeakGroup(kind: kind, name: name, instances: 1, members: members)
    group.membersLeftOut = order.count - members.count
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
  /// The members a group keeps, with their stacks: the first instance's starting blocks up to
  /// this many.
  static let keptMembers = 256

  /// A cycle's name: its members' categories in pointer order, back to the first; a cycle of
  /// more than eight names its first four and last two, and how many it leaves out.
  static func cycleName(length: Int, name: (Int) -> String) -> String {
    guard length > 8 else {
      return ((0..<length).map(name) + [name(0)]).joined(separator: " → ")
    }
    let left = ByteCountText.grouped(UInt64(length - 6))
    return ((0..<4).map(name) + ["… \(left) more"] + (length - 2..<length).map(name) + [name(0)])
      .joined(separator: " → ")
  }

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
