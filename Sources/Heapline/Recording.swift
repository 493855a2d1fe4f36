import HeaplineAnalysis
import HeaplineTrace

/// The result of ``Heapline/record(to:depth:_:)->_``: the statistics of the recorded extent.
public struct Recording: Sendable {
  /// The figures that `heapline report` prints for the same trace.
  public let statistics: Statistics
  /// Whether the trace was complete (it always is, unless a write failed).
  public let isComplete: Bool
  /// The trace file, kept for the analyses that read it again (timeline, generations).
  let trace: RecordedTrace

  init(path: String, isTemporary: Bool = false) throws {
    // First, so that a temporary trace is removed even when reading it fails.
    trace = RecordedTrace(path: path, isTemporary: isTemporary)
    let reader = try TraceReader(path: path)
    statistics = try Statistics(reader: reader)
    isComplete = reader.isComplete
  }
}
