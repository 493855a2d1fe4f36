/// What a ``TimelineScan`` computes: the length of a time step, and whether rows break live
/// bytes down by category.
///
/// ```swift
/// let options = try TimelineOptions(interval: .milliseconds(100), grouping: .categories(top: 5))
/// ```
public struct TimelineOptions: Hashable, Sendable {
  /// How rows break live bytes down.
  public enum Grouping: Hashable, Sendable {
    /// Totals only.
    case total
    /// One column per category for the `top` categories with the highest live bytes at any
    /// moment, and one for all the others together.
    case categories(top: Int)
  }

  /// The length of a step, in nanoseconds; at least 1.
  public var interval: UInt64
  /// Totals only, or a column per top category.
  public var grouping: Grouping

  /// Steps of `interval` nanoseconds.
  ///
  /// - Throws: ``AnalysisError/invalidInterval(_:)`` for 0, and
  ///   ``AnalysisError/invalidOption(_:)`` for a negative category count.
  public init(intervalNanoseconds interval: UInt64, grouping: Grouping = .categories(top: 10))
    throws(AnalysisError)
  {
    guard interval > 0 else {
      throw AnalysisError.invalidInterval("a step must last at least 1 nanosecond")
    }
    if case .categories(let top) = grouping, top < 0 {
      throw AnalysisError.invalidOption("the number of categories must be 0 or more, not \(top)")
    }
    self.interval = interval
    self.grouping = grouping
  }

  /// Steps of `interval`, which must be at least a nanosecond.
  public init(interval: Duration, grouping: Grouping = .categories(top: 10)) throws(AnalysisError) {
    guard interval >= .nanoseconds(1) else {
      throw AnalysisError.invalidInterval("a step must last at least 1 nanosecond, not \(interval)")
    }
    try self.init(
      intervalNanoseconds: StatisticsOptions.nanoseconds(interval), grouping: grouping)
  }
}
