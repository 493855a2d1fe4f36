import HeaplineTrace

/// Every allocating stack of a trace with its figures and its frames symbolized, root first:
/// what the folded and speedscope exports and the comparison of two traces are made from.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace", options: StackProfile.statisticsOptions)
/// let profile = StackProfile(statistics: stats, weights: [.live], symbolizer: Symbolizer())
/// ```
public struct StackProfile: Sendable {
  /// One stack.
  public struct Entry: Hashable, Sendable {
    /// Its figures.
    public var statistics: StackStatistics
    /// Its frames, outermost first, with inlined functions expanded after their callers:
    /// places in ``StackProfile/frames``.
    public var frames: [Int]
  }

  /// The stacks with a nonzero weight of those asked for, in the statistics' order.
  public var entries: [Entry]
  /// The frames that entries name, each once (`FrameTable`).
  public let frames: [SymbolizedFrame]
  /// The trace's totals, which the weights of the stacks add up to.
  public var totals: AllocationTotals
  /// Where the statistics come from.
  public var trace: TraceSummary

  /// Statistics options that keep every stack rather than the top ones.
  public static let statisticsOptions = StatisticsOptions(topStackCount: .max)

  /// Keeps the stacks of `statistics` whose weight is nonzero for one of `weights`, and
  /// symbolizes their frames in one run of `symbolizer` (`nil` for module offsets only).
  ///
  /// `statistics` should keep every stack (``statisticsOptions``); otherwise only its top
  /// stacks are exported and the weights no longer add up to the totals.
  public init(statistics: Statistics, weights: Set<StackWeight>, symbolizer: Symbolizer?) {
    self.init(
      statistics: statistics, keeping: { stack in weights.contains { $0.weight(of: stack) > 0 } },
      symbolizer: symbolizer)
  }

  /// Keeps the stacks of `statistics` that `keeps` accepts, and symbolizes their frames in
  /// one run of `symbolizer` (`nil` for module offsets only).
  public init(
    statistics: Statistics, keeping keeps: (StackStatistics) -> Bool, symbolizer: Symbolizer?
  ) {
    let stacks = statistics.topStacks.filter(keeps)
    var table = FrameTable(
      symbols: (symbolizer ?? Symbolizer(toolPath: nil))
        .symbolize(stacks.flatMap(\.frames), modules: statistics.modules))
    entries = stacks.map { stack in
      Entry(statistics: stack, frames: table.places(of: stack.frames).reversed())
    }
    frames = table.frames
    totals = statistics.totals
    trace = statistics.trace
  }

  /// The frames of `entry`, outermost first.
  public func frames(of entry: Entry) -> [SymbolizedFrame] { entry.frames.map { frames[$0] } }

  /// The places in ``frames`` of the frames of `entry` that `style` shows, innermost first.
  public func shownFrames(of entry: Entry, style: FrameStyle) -> [Int] {
    FrameTable.shown(entry.frames.reversed(), traits: { style.traits(frames[$0]) }, style: style)
  }

  /// ``shownFrames(of:style:)`` for many entries: each frame's traits are found once, not once
  /// per stack that holds it.
  public func shownFrames(style: FrameStyle) -> ShownFrames { ShownFrames(self, style: style) }

  /// The frames that a style shows of each of a profile's entries (``shownFrames(style:)``).
  public struct ShownFrames {
    private let style: FrameStyle
    private let traits: [FrameStyle.Traits]

    fileprivate init(_ profile: StackProfile, style: FrameStyle) {
      self.style = style
      traits = profile.frames.map(style.traits)
    }

    /// The places in ``StackProfile/frames`` of the frames of `entry` shown, innermost first.
    public func of(_ entry: Entry) -> [Int] {
      FrameTable.shown(entry.frames.reversed(), traits: { traits[$0] }, style: style)
    }
  }
}
