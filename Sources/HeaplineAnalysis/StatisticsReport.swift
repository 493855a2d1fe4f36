import HeaplineTrace

/// Statistics with the frames of their top stacks symbolized: what a ``ReportRenderer``
/// renders.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace")
/// let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
/// print(try TextReportRenderer().render(report))
/// ```
public struct StatisticsReport: Sendable {
  /// The figures.
  public var statistics: Statistics
  /// Symbolized frames of every return address in ``Statistics/topStacks``.
  public var symbols: [UInt64: [SymbolizedFrame]]
  /// Whether ``Statistics/topStacks`` are stacks, or functions that merge stacks (see
  /// ``init(mergingByFunction:symbolizer:topCount:order:)``).
  public var grouping = StackGrouping.stack
  /// For each merged entry of ``Statistics/topStacks``, by its id, the number of stacks it
  /// merges; empty for stacks.
  public var mergedStackCounts: [StackID: Int] = [:]

  /// Symbolizes the top stacks with one run of `symbolizer`; with `nil`, frames show module
  /// offsets only.
  public init(statistics: Statistics, symbolizer: Symbolizer?) {
    self.statistics = statistics
    let pcs =
      statistics.topStacks.flatMap(\.frames) + statistics.backingStores.topStacks.flatMap(\.frames)
    self.symbols = (symbolizer ?? Symbolizer(toolPath: nil))
      .symbolize(pcs, modules: statistics.modules)
  }

  /// The frames of `stack`, outermost last, with inlined functions expanded.
  public func frames(of stack: StackStatistics) -> [SymbolizedFrame] {
    stack.frames.flatMap(frames(atPC:))
  }

  /// The frames at return address `pc`: its function, and those inlined into it there.
  public func frames(atPC pc: UInt64) -> [SymbolizedFrame] {
    symbols[pc] ?? [SymbolizedFrame(pc: pc)]
  }
}
