/// What ranks allocation stacks in a report (`heapline report --sort`), largest first.
///
/// ```swift
/// var options = StatisticsOptions(topStackCount: 5)
/// options.stackOrder = .temporary  // the stacks that free their blocks at once, most first
/// ```
public enum StackOrder: String, CaseIterable, Hashable, Sendable {
  /// Bytes held at the moment of the peak of live bytes.
  case peak
  /// Bytes allocated in all.
  case allocated
  /// Allocations made.
  case count
  /// Temporary allocations: blocks freed before any other allocation or free.
  case temporary
  /// Bytes still live at the end: leaked, in heaptrack's sense.
  case leaked

  /// The figure this order ranks by.
  public func value(of stack: StackStatistics) -> UInt64 {
    switch self {
    case .peak: stack.bytesAtPeak
    case .allocated: stack.totalBytes
    case .count: stack.allocationCount
    case .temporary: stack.temporaryCount
    case .leaked: stack.liveBytes
    }
  }

  /// How the report's header names the order: `by live bytes at the peak`.
  public var phrase: String {
    switch self {
    case .peak: "by live bytes at the peak"
    case .allocated: "by bytes allocated"
    case .count: "by number of allocations"
    case .temporary: "by temporary allocations"
    case .leaked: "by bytes leaked (live at the end)"
    }
  }

  /// Whether `lhs` ranks above `rhs`: this order's figure, then bytes at the peak, live bytes
  /// and total bytes, then the id, so the order is total.
  public func ranksHigher(_ lhs: StackStatistics, _ rhs: StackStatistics) -> Bool {
    let (left, right) = (value(of: lhs), value(of: rhs))
    if left != right { return left > right }
    if lhs.bytesAtPeak != rhs.bytesAtPeak { return lhs.bytesAtPeak > rhs.bytesAtPeak }
    if lhs.liveBytes != rhs.liveBytes { return lhs.liveBytes > rhs.liveBytes }
    if lhs.totalBytes != rhs.totalBytes { return lhs.totalBytes > rhs.totalBytes }
    return lhs.id < rhs.id
  }
}
