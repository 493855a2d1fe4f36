import HeaplineTrace

/// What one entry of a report's stack list stands for.
public enum StackGrouping: String, CaseIterable, Hashable, Sendable {
  /// One allocating call stack.
  case stack
  /// Every stack whose first user frame (see `FrameRole`) is in the same function, merged,
  /// as heaptrack_print's "merged by function" does.
  case function
}

extension StatisticsReport {
  /// A report whose stack list merges stacks by the function of their first user frame.
  ///
  /// `statistics` must hold every stack (``StackProfile/statisticsOptions``), so that the merged
  /// figures are whole: a function's bytes at the peak are the sum of its stacks', all held at
  /// the same instant. Each entry keeps the id of its highest-ranked stack and, as its only
  /// frame, that function without a line. The `topCount` functions that rank highest in
  /// `order` are kept; ``Statistics/stackCount`` becomes the number of functions.
  ///
  /// ```swift
  /// let all = try Statistics(reader: reader, options: StackProfile.statisticsOptions)
  /// let report = StatisticsReport(
  ///   mergingByFunction: all, symbolizer: Symbolizer(), topCount: 10, order: .peak)
  /// ```
  public init(
    mergingByFunction statistics: Statistics, symbolizer: Symbolizer?, topCount: Int,
    order: StackOrder
  ) {
    self.init(statistics: statistics, symbolizer: symbolizer)
    var merged: [StackStatistics] = []
    var groupIndex: [String: Int] = [:]
    var representatives: [UInt64: SymbolizedFrame] = [:]
    for stack in statistics.topStacks.sorted(by: order.ranksHigher) {
      let frame = FrameRole.firstUserFrame(frames(of: stack)) ?? SymbolizedFrame(pc: 0)
      let key = frame.name(fullNames: true) + "\u{0}" + (frame.modulePath ?? "")
      if let index = groupIndex[key] {
        merged[index].add(stack)
        mergedStackCounts[merged[index].id, default: 1] += 1
        continue
      }
      groupIndex[key] = merged.count
      var entry = stack
      entry.frames = [frame.pc]
      merged.append(entry)
      mergedStackCounts[entry.id] = 1
      var function = frame
      function.line = nil
      function.column = nil
      function.isInlined = false
      representatives[frame.pc] = function
    }
    for (pc, frame) in representatives { symbols[pc] = [frame] }
    self.statistics.stackCount = merged.count
    self.statistics.topStacks = Array(merged.sorted(by: order.ranksHigher).prefix(topCount))
    grouping = .function
  }
}

extension StackStatistics {
  /// Adds `other`'s figures to these.
  fileprivate mutating func add(_ other: StackStatistics) {
    bytesAtPeak &+= other.bytesAtPeak
    liveBytes &+= other.liveBytes
    liveBlocks &+= other.liveBlocks
    allocationCount &+= other.allocationCount
    totalBytes &+= other.totalBytes
    temporaryCount &+= other.temporaryCount
  }
}
