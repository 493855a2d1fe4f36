/// The pointers between lost blocks, as a directed graph, with its strongly connected
/// components: a component of more than one block (or a block that points to itself) is a
/// cycle, which no single missing `free` or `release` explains.
///
/// Components come from Tarjan's algorithm, run with an explicit stack, never recursion: a lost
/// list of a million nodes is a path of a million edges.
///
/// ```swift
/// let graph = LeakGraph(nodeCount: 3, edges: [(0, 1), (1, 0), (1, 2)])
/// graph.component(of: 0) == graph.component(of: 1)  // true: a cycle
/// graph.sourceComponents                              // [the cycle]: nothing points into it
/// ```
struct LeakGraph {
  /// Successors of each node, deduplicated, in the order the edges came.
  let successors: [[Int]]
  /// The component of each node; components are numbered in reverse topological order (a
  /// component's successors have smaller numbers), as Tarjan's algorithm finishes them.
  private(set) var componentOfNode: [Int]
  /// The members of each component, in node order.
  private(set) var components: [[Int]] = []

  init(nodeCount: Int, edges: [(from: Int, to: Int)]) {
    var successors = [[Int]](repeating: [], count: nodeCount)
    var seen = Set<Int64>()
    for edge in edges where seen.insert(Int64(edge.from) << 32 | Int64(edge.to)).inserted {
      successors[edge.from].append(edge.to)
    }
    self.successors = successors
    componentOfNode = [Int](repeating: -1, count: nodeCount)
    findComponents()
  }

  func component(of node: Int) -> Int { componentOfNode[node] }

  /// Whether a component is a cycle: several nodes, or one that points to itself.
  func isCycle(_ component: Int) -> Bool {
    let members = components[component]
    return members.count > 1 || successors[members[0]].contains(members[0])
  }

  /// Components that no other component points into: where each lost structure starts.
  var sourceComponents: [Int] {
    var hasPredecessor = [Bool](repeating: false, count: components.count)
    for (node, targets) in successors.enumerated() {
      for target in targets where componentOfNode[target] != componentOfNode[node] {
        hasPredecessor[componentOfNode[target]] = true
      }
    }
    return components.indices.filter { !hasPredecessor[$0] }
  }

  /// The shortest cycle through `start` within its component, as nodes from `start` back to
  /// just before it; `[start]` when it has none, or none but its pointer to itself, which a
  /// cycle through other blocks goes before (a Swift task points into itself, and also to the
  /// slab that points back to it: that is the cycle to name).
  func shortestCycle(through start: Int) -> [Int] {
    let component = componentOfNode[start]
    var previous = [Int: Int]()
    var queue = [start]
    var head = 0
    while head < queue.count {
      let node = queue[head]
      head += 1
      for next in successors[node] where componentOfNode[next] == component {
        if next == start && node != start {
          var path = [node]
          while let before = previous[path[path.count - 1]] { path.append(before) }
          return path.reversed()
        }
        if previous[next] == nil && next != start {
          previous[next] = node
          queue.append(next)
        }
      }
    }
    return [start]
  }

  private mutating func findComponents() {
    let count = successors.count
    var index = [Int](repeating: -1, count: count)
    var lowLink = [Int](repeating: 0, count: count)
    var onStack = [Bool](repeating: false, count: count)
    var stack: [Int] = []
    var nextIndex = 0
    // Each frame is a node and how many of its successors it has looked at.
    var frames: [(node: Int, next: Int)] = []
    for root in 0..<count where index[root] < 0 {
      frames.append((root, 0))
      index[root] = nextIndex
      lowLink[root] = nextIndex
      nextIndex += 1
      stack.append(root)
      onStack[root] = true
      while let (node, next) = frames.last {
        if next < successors[node].count {
          frames[frames.count - 1].next += 1
          let target = successors[node][next]
          if index[target] < 0 {
            index[target] = nextIndex
            lowLink[target] = nextIndex
            nextIndex += 1
            stack.append(target)
            onStack[target] = true
            frames.append((target, 0))
          } else if onStack[target] {
            lowLink[node] = min(lowLink[node], index[target])
          }
          continue
        }
        frames.removeLast()
        if let parent = frames.last?.node { lowLink[parent] = min(lowLink[parent], lowLink[node]) }
        guard lowLink[node] == index[node] else { continue }
        var members: [Int] = []
        while let member = stack.popLast() {
          onStack[member] = false
          componentOfNode[member] = components.count
          members.append(member)
          if member == node { break }
        }
        components.append(members.sorted())
      }
    }
  }
}
