/// What a stack export weighs each stack by.
public enum StackWeight: String, CaseIterable, Hashable, Sendable {
  /// Bytes live at the end of the trace: what the stack still holds.
  case live
  /// Bytes live at the moment of the peak: the stack's share of the peak.
  case peak
  /// Bytes allocated over the whole trace.
  case allocated

  /// How exports title the weight: `live bytes at exit`.
  public var title: String {
    switch self {
    case .live: "live bytes at exit"
    case .peak: "live bytes at the peak"
    case .allocated: "bytes allocated"
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
