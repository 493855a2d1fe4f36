/// The pointers between lost blocks, as a directed graph, with its strongly connected
/// components: a component of more than one block (or a block that points to itself) is a
/// cycle, which no single missing `free` or `release` explains.
///
/// Components come from Tarjan's algorithm, run with an explicit stack, never recursion: a lost
/// list of a million nodes is a path of a million edges. Successors and components are kept as
/// flat arrays of 32-bit node numbers with their starts (compressed rows): a scan at exit can
/// find millions of blocks, and an array per node cost `heapline leaks` 40 bytes a block twice
/// over, and a dictionary of positions 34.
///
/// ```swift
/// let graph = LeakGraph(nodeCount: 3, edges: [(0, 1), (1, 0), (1, 2)])
/// graph.component(of: 0) == graph.component(of: 1)  // true: a cycle
/// graph.sourceComponents                              // [the cycle]: nothing points into it
/// ```
struct LeakGraph {
  /// Node i's successors are `targets[successorStart[i]..<successorStart[i + 1]]`,
  /// deduplicated, in the order the edges came.
  private var successorStart: [Int32]
  private var targets: [Int32]
  /// The component of each node; components are numbered in reverse topological order (a
  /// component's successors have smaller numbers), as Tarjan's algorithm finishes them.
  private var componentOfNode: [Int32]
  /// Component c's members are `members[memberStart[c]..<memberStart[c + 1]]`, in node order.
  private var memberStart: [Int32] = [0]
  private var members: [Int32] = []

  /// A graph of `nodeCount` nodes and `edges` (from, to), which is read twice.
  init<Edges: Collection>(nodeCount: Int, edges: Edges) where Edges.Element == (Int, Int) {
    var start = [Int32](repeating: 0, count: nodeCount + 1)
    for (from, _) in edges { start[from + 1] += 1 }
    for node in 0..<nodeCount { start[node + 1] += start[node] }
    var cursor = start
    var targets = [Int32](repeating: 0, count: Int(start[nodeCount]))
    for (from, to) in edges {
      targets[Int(cursor[from])] = Int32(to)
      cursor[from] += 1
    }
    // Each node's first edge to a target stands for its repeats: `seen[t]` is the last node
    // whose row held t.
    var seen = cursor
    seen.withUnsafeMutableBufferPointer { $0.update(repeating: -1) }
    var kept = 0
    for node in 0..<nodeCount {
      let from = Int(start[node])
      start[node] = Int32(kept)
      for at in from..<Int(cursor[node]) where seen[Int(targets[at])] != Int32(node) {
        seen[Int(targets[at])] = Int32(node)
        targets[kept] = targets[at]
        kept += 1
      }
    }
    start[nodeCount] = Int32(kept)
    targets.removeLast(targets.count - kept)
    successorStart = start
    self.targets = targets
    componentOfNode = [Int32](repeating: -1, count: nodeCount)
    findComponents()
  }

  var nodeCount: Int { componentOfNode.count }
  var componentCount: Int { memberStart.count - 1 }

  func component(of node: Int) -> Int { Int(componentOfNode[node]) }

  func successors(of node: Int) -> ArraySlice<Int32> {
    targets[Int(successorStart[node])..<Int(successorStart[node + 1])]
  }

  /// A component's nodes, in node order.
  func members(of component: Int) -> ArraySlice<Int32> {
    members[Int(memberStart[component])..<Int(memberStart[component + 1])]
  }

  /// Whether a component is a cycle: several nodes, or one that points to itself.
  func isCycle(_ component: Int) -> Bool {
    let nodes = members(of: component)
    return nodes.count > 1 || successors(of: Int(nodes.first!)).contains(nodes.first!)
  }

  /// Components that no other component points into: where each lost structure starts.
  var sourceComponents: [Int] {
    var hasPredecessor = [Bool](repeating: false, count: componentCount)
    for node in 0..<nodeCount {
      for target in successors(of: node) where componentOfNode[Int(target)] != componentOfNode[node]
      {
        hasPredecessor[Int(componentOfNode[Int(target)])] = true
      }
    }
    return hasPredecessor.indices.filter { !hasPredecessor[$0] }
  }

  /// The shortest cycle through `start` within its component, as nodes from `start` back to
  /// just before it; `[start]` when it has none, or none but its pointer to itself, which a
  /// cycle through other blocks goes before (a Swift task points into itself, and also to the
  /// slab that points back to it: that is the cycle to name).
  func shortestCycle(through start: Int) -> [Int] {
    let component = componentOfNode[start]
    // Breadth first within the component: each node's predecessor on the way, -1 for none yet
    // (an array, not a dictionary: a lost ring of millions is one component).
    var previous = [Int32](repeating: -1, count: nodeCount)
    var queue: [Int32] = [Int32(start)]
    var head = 0
    while head < queue.count {
      let node = Int(queue[head])
      head += 1
      for next in successors(of: node).lazy.map(Int.init) where componentOfNode[next] == component {
        if next == start && node != start {
          var path = [node]
          while path[path.count - 1] != start { path.append(Int(previous[path[path.count - 1]])) }
          return path.reversed()
        }
        if previous[next] < 0 && next != start {
          previous[next] = Int32(node)
          queue.append(Int32(next))
        }
      }
    }
    return [start]
  }

  private mutating func findComponents() {
    let count = nodeCount
    var index = [Int32](repeating: -1, count: count)
    var lowLink = [Int32](repeating: 0, count: count)
    var onStack = [Bool](repeating: false, count: count)
    var stack: [Int32] = []
    var nextIndex: Int32 = 0
    // Each frame is a node and the place in `targets` of the next successor it looks at.
    var frames: [(node: Int32, next: Int32)] = []
    members.reserveCapacity(count)
    for root in 0..<count where index[root] < 0 {
      frames.append((Int32(root), successorStart[root]))
      index[root] = nextIndex
      lowLink[root] = nextIndex
      nextIndex += 1
      stack.append(Int32(root))
      onStack[root] = true
      while let (node32, next) = frames.last {
        let node = Int(node32)
        if next < successorStart[node + 1] {
          frames[frames.count - 1].next += 1
          let target = Int(targets[Int(next)])
          if index[target] < 0 {
            index[target] = nextIndex
            lowLink[target] = nextIndex
            nextIndex += 1
            stack.append(Int32(target))
            onStack[target] = true
            frames.append((Int32(target), successorStart[target]))
          } else if onStack[target] {
            lowLink[node] = min(lowLink[node], index[target])
          }
          continue
        }
        frames.removeLast()
        if let parent = frames.last?.node {
          lowLink[Int(parent)] = min(lowLink[Int(parent)], lowLink[node])
        }
        guard lowLink[node] == index[node] else { continue }
        let first = members.count
        while let member = stack.popLast() {
          onStack[Int(member)] = false
          componentOfNode[Int(member)] = Int32(componentCount)
          members.append(member)
          if Int(member) == node { break }
        }
        members[first...].sort()
        memberStart.append(Int32(members.count))
      }
    }
  }
}
