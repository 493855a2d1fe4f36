/// What ``Statistics`` computes: how many stacks to rank, and up to which time.
public struct StatisticsOptions: Hashable, Sendable {
  /// How many stacks ``Statistics/topStacks`` keeps.
  public var topStackCount: Int
  /// What ranks the stacks: bytes at the peak, by default.
  public var stackOrder: StackOrder = .peak
  /// Stop at this time, in nanoseconds since the trace's start: the statistics are then as
  /// they stood at that moment. `nil` reads the whole trace.
  public var endTime: UInt64?
  /// Whether a stack's blocks of different categories are counted apart: then
  /// ``Statistics/topStacks`` holds one entry per stack and category, each with its
  /// ``StackStatistics/category``, as a pprof sample is a stack with a category label.
  public var splitsStacksByCategory = false

  /// Options for the top `topStackCount` stacks, up to `upTo` after the trace's start.
  ///
  /// ```swift
  /// StatisticsOptions(topStackCount: 5, upTo: .seconds(2))
  /// ```
  public init(topStackCount: Int = 10, upTo: Duration? = nil) {
    self.topStackCount = max(0, topStackCount)
    self.endTime = upTo.map(Self.nanoseconds)
  }

  /// Whole nanoseconds in `duration`; negative durations count as 0, huge ones saturate.
  static func nanoseconds(_ duration: Duration) -> UInt64 {
    let (seconds, attoseconds) = duration.components
    guard seconds >= 0, seconds > 0 || attoseconds > 0 else { return 0 }
    let (whole, overflow) = UInt64(seconds).multipliedReportingOverflow(by: 1_000_000_000)
    guard !overflow else { return .max }
    // The fraction has the sign of attoseconds, which may differ from that of seconds.
    let fraction = attoseconds / 1_000_000_000
    if fraction < 0 { return whole - fraction.magnitude }
    let (sum, sumOverflow) = whole.addingReportingOverflow(fraction.magnitude)
    return sumOverflow ? .max : sum
  }
}
