import HeaplineAnalysis
import HeaplineTrace

extension Recording {
  /// The path of the recording's trace file; a temporary one lasts as long as the recording.
  public var tracePath: String { trace.path }

  /// Live memory over time, one row per `interval`, as `heapline timeline` writes it.
  ///
  /// ```swift
  /// let timeline = try recording.timeline(interval: .milliseconds(10))
  /// let peak = timeline.rows.map(\.liveBytes).max()  // == recording.statistics.totals.peakLiveBytes
  /// ```
  public func timeline(
    interval: Duration, grouping: TimelineOptions.Grouping = .categories(top: 10)
  ) throws -> Timeline {
    try Timeline(
      reader: TraceReader(path: trace.path),
      options: TimelineOptions(interval: interval, grouping: grouping))
  }

  /// The generations that the recording's marks (``Heapline/mark(_:)``) split it into, each
  /// with what it allocated and what of that is still live at the end.
  public var generations: [Generation] {
    get throws { try Generation.all(in: TraceReader(path: trace.path)) }
  }

  /// What was allocated after mark `from` and is still live at mark `to`, by category and by
  /// stack. `start` and `end` name the ends of the recording.
  ///
  /// ```swift
  /// let growth = try recording.growth(from: "A", to: "B")
  /// #expect(growth.bytes < 64 * 1024)
  /// ```
  public func growth(from: MarkReference, to: MarkReference) throws -> Growth {
    try Growth(reader: TraceReader(path: trace.path), from: from, to: to)
  }
}
