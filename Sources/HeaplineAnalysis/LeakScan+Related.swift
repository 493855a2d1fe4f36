import HeaplineTrace

extension LeakScan {
  /// The same scan with only the leaks that involve a block `isRelevant` accepts: the blocks
  /// connected to such a block through pointers between found blocks, in either direction, so
  /// that a leak is kept or left out whole (its root, what hangs from it, and its cycles).
  ///
  /// `Heapline.expectNoLeaks` keeps the leaks of the thread that ran its body, and leaves out
  /// those of other threads that ran meanwhile (other tests in the same process).
  ///
  /// ```swift
  /// let mine = scan.onlyLeaksInvolving { threads.contains($0.id.threadSerial) }
  /// ```
  public func onlyLeaksInvolving(_ isRelevant: (LeakedBlock) -> Bool) -> LeakScan {
    // Union-find over the edges: each block's representative, with path halving.
    var parent = Array(blocks.indices)
    func root(_ node: Int) -> Int {
      var node = node
      while parent[node] != node {
        parent[node] = parent[parent[node]]
        node = parent[node]
      }
      return node
    }
    for edge in edges where blocks.indices.contains(edge.from) && blocks.indices.contains(edge.to) {
      let a = root(edge.from)
      let b = root(edge.to)
      if a != b { parent[a] = b }
    }
    let relevantRoots = Set(blocks.indices.filter { isRelevant(blocks[$0]) }.map(root))
    var renumbered = [Int](repeating: -1, count: blocks.count)
    var kept = self
    kept.blocks = []
    for index in blocks.indices where relevantRoots.contains(root(index)) {
      renumbered[index] = kept.blocks.count
      kept.blocks.append(blocks[index])
    }
    kept.edges = edges.compactMap { edge in
      guard blocks.indices.contains(edge.from), blocks.indices.contains(edge.to),
        renumbered[edge.from] >= 0, renumbered[edge.to] >= 0
      else { return nil }
      return LeakEdge(
        from: renumbered[edge.from], to: renumbered[edge.to], isInterior: edge.isInterior)
    }
    kept.announcedBlocks = UInt64(kept.blocks.count)
    kept.announcedEdges = UInt64(kept.edges.count)
    if !isComplete {  // keep it marked incomplete
      kept.announcedBlocks += announcedBlocks - min(announcedBlocks, UInt64(blocks.count))
      kept.announcedEdges += announcedEdges - min(announcedEdges, UInt64(edges.count))
    }
    return kept
  }
}
