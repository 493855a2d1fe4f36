import HeaplineAnalysis
import HeaplineTrace

/// The result of ``Heapline/record(to:depth:_:)``: the statistics of the recorded extent.
public struct Recording: Sendable {
  /// The figures that `heapline report` prints for the same trace.
  public let statistics: Statistics
  /// Whether the trace was complete (it always is, unless a write failed).
  public let isComplete: Bool

  init(path: String) throws {
    let reader = try TraceReader(path: path)
    statistics = try Statistics(reader: reader)
    isComplete = reader.isComplete
  }
}
