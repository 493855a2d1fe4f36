import HeaplineTrace

/// One memory warning of a trace, with what each observer freed in answer.
///
/// ```swift
/// for warning in stats.memoryWarnings {
///   print(warning.time, warning.warning.level, warning.freedBytes)
/// }
/// ```
public struct MemoryWarningStatistics: Hashable, Sendable {
  /// When it was raised, in nanoseconds since the trace's start.
  public var time: UInt64
  /// Its level, source, footprint and budget.
  public var warning: MemoryWarning
  /// The observers' answers, in the order they came.
  public var responses: [WarningResponse]

  /// Creates a warning's figures.
  public init(time: UInt64, warning: MemoryWarning, responses: [WarningResponse] = []) {
    self.time = time
    self.warning = warning
    self.responses = responses
  }

  /// The bytes all observers freed together.
  public var freedBytes: UInt64 {
    responses.reduce(0) { $0 &+ $1.freedBytes }
  }
}

/// The memory-limit kill that ended a trace: when, the footprint and the budget.
public struct MemoryLimitKill: Hashable, Sendable {
  /// When the footprint crossed the budget, in nanoseconds since the trace's start.
  public var time: UInt64
  /// The footprint and the budget.
  public var limit: MemoryLimitExceeded

  /// Creates the kill's figures.
  public init(time: UInt64, limit: MemoryLimitExceeded) {
    self.time = time
    self.limit = limit
  }
}
