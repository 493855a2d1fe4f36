import HeaplineTrace

/// A whole timeline in memory: the rows of a ``TimelineScan``, for in-process tests and short
/// traces. Long traces should stream with ``TimelineScan/run(_:)`` or ``TimelineCSVWriter``.
///
/// ```swift
/// let timeline = try Timeline(
///   reader: TraceReader(path: "app.trace"),
///   options: TimelineOptions(interval: .milliseconds(10)))
/// timeline.rows.map(\.liveBytes).max() == timeline.peakLiveBytes  // true
/// ```
public struct Timeline: Sendable {
  /// Names of the category columns, `other` last; empty when rows show totals only.
  public var categoryColumns: [String]
  /// The rows, in time order.
  public var rows: [TimelineRow]
  /// The peak of live bytes.
  public var peakLiveBytes: UInt64

  /// Computes every row of the timeline of `reader`.
  public init(reader: TraceReader, options: TimelineOptions) throws(AnalysisError) {
    let scan = try TimelineScan(reader: reader, options: options)
    categoryColumns = scan.categoryColumns
    peakLiveBytes = scan.peakLiveBytes
    rows = try scan.rows()
  }

  /// The live bytes of category column `name` in `row`, or `nil` when it has no column.
  public func liveBytes(of name: String, in row: TimelineRow) -> UInt64? {
    categoryColumns.firstIndex(of: name).map { row.categoryLiveBytes[$0] }
  }

  /// The row in which the first mark named `name` was made.
  public func row(withMark name: String) -> TimelineRow? {
    rows.first { $0.marks.contains(name) }
  }
}
