/// What a stack export weighs each stack by.
public enum StackWeight: String, CaseIterable, Hashable, Sendable {
  /// Bytes live at the end of the trace: what the stack still holds.
  case live
  /// Bytes live at the moment of the peak: the stack's share of the peak.
  case peak
  /// Bytes allocated over the whole trace.
  case allocated

  /// How exports title the weight: `live bytes at exit`.
  public var title: String { title(upTo: nil) }

  /// The title of the weight of statistics computed up to `endTime` (`live bytes at 750.000
  /// ms`), or over the whole trace for `nil`.
  public func title(upTo endTime: UInt64?) -> String {
    switch self {
    case .live: endTime.map { "live bytes at \(TimeText.duration($0))" } ?? "live bytes at exit"
    case .peak: endTime == nil ? "live bytes at the peak" : "live bytes at the peak up to then"
    case .allocated: endTime == nil ? "bytes allocated" : "bytes allocated up to then"
    }
  }

  /// The stack's weight.
  public func weight(of stack: StackStatistics) -> UInt64 {
    switch self {
    case .live: stack.liveBytes
    case .peak: stack.bytesAtPeak
    case .allocated: stack.totalBytes
    }
  }

  /// The trace's total for this weight, which the weights of all its stacks add up to.
  public func total(of totals: AllocationTotals) -> UInt64 {
    switch self {
    case .live: totals.liveBytes
    case .peak: totals.peakLiveBytes
    case .allocated: totals.allocatedBytes
    }
  }
}
