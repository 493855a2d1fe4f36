import HeaplineTrace

/// Computes a trace's timeline in two streaming passes and hands each row over as soon as it
/// is complete, so a timeline of any length takes memory for the live blocks and one row.
///
/// The first pass, when the scan is created, finds the peak of live bytes, the end of the
/// trace and the top categories; ``run(_:)`` is the second, which makes the rows.
///
/// ```swift
/// let scan = try TimelineScan(
///   reader: TraceReader(path: "app.trace"),
///   options: TimelineOptions(interval: .milliseconds(100)))
/// print(scan.categoryColumns)  // ["MyApp.Image", "Malloc 48 Bytes", "other"]
/// try scan.run { row in print(row.endTime, row.liveBytes) }
/// ```
public final class TimelineScan {
  /// The trace read.
  public let reader: TraceReader
  /// The options the rows follow.
  public let options: TimelineOptions
  /// Names of the category columns, `other` last; empty when rows show totals only.
  public let categoryColumns: [String]
  /// Names of the backing-store categories, one column each; empty when rows show totals
  /// only.
  public let backingStoreColumns: [String]
  /// The peak of live bytes, which the report gives too; the largest ``TimelineRow/liveBytes``
  /// of the rows equals it.
  public let peakLiveBytes: UInt64
  /// The end of the trace, in nanoseconds since its start: the last row's end.
  public let endTime: UInt64
  /// Events the row pass has read so far.
  public private(set) var eventsRead: UInt64 = 0
  /// Rows handed over so far.
  public private(set) var rowsEmitted: UInt64 = 0
  /// The most live blocks either pass held at once: the only memory that grows with the trace.
  public private(set) var maxTrackedBlocks: Int

  private let plan: TimelinePlan

  /// The most rows a timeline may have: ten million rows are about a gigabyte of CSV.
  public static let maximumRowCount: UInt64 = 10_000_000

  /// Runs the pre-pass over the trace.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` when the trace is damaged.
  public init(reader: TraceReader, options: TimelineOptions) throws(AnalysisError) {
    do {
      plan = try TimelinePlan(reader: reader, grouping: options.grouping)
    } catch {
      throw .trace(error)
    }
    // The end time comes from checked chunks, so the row count is bounded by the trace's real
    // length; an interval that still makes an absurd number of rows is refused, not written.
    let rows = plan.endTime / options.interval + 2
    guard rows <= Self.maximumRowCount else {
      throw .invalidInterval(
        "\(rows) rows of \(TimeText.duration(options.interval)) over the trace's"
          + " \(TimeText.duration(plan.endTime)) exceed \(Self.maximumRowCount); use a longer"
          + " interval")
    }
    self.reader = reader
    self.options = options
    categoryColumns = plan.columnNames
    backingStoreColumns = plan.backingColumnNames
    peakLiveBytes = plan.peakLiveBytes
    endTime = plan.endTime
    maxTrackedBlocks = plan.maxTrackedBlocks
  }

  /// Reads the trace again and calls `body` with each row, in time order.
  public func run(_ body: (TimelineRow) throws(AnalysisError) -> Void) throws(AnalysisError) {
    eventsRead = 0
    rowsEmitted = 0
    var accumulator = TimelineAccumulator(plan: plan, interval: options.interval)
    var events = LookaheadEvents(reader.events())
    let emit = { (row: TimelineRow) throws(AnalysisError) in
      self.rowsEmitted += 1
      try body(row)
    }
    while let event = try events.nextEvent(prefetching: { accumulator.prefetch($0) }) {
      eventsRead = events.eventCount
      try accumulator.apply(event, emit: emit)
    }
    maxTrackedBlocks = max(maxTrackedBlocks, accumulator.maxTrackedBlocks)
    try accumulator.finish(endTime: plan.endTime, emit: emit)
  }

  /// Every row, in memory: for in-process tests and short traces.
  public func rows() throws(AnalysisError) -> [TimelineRow] {
    var rows: [TimelineRow] = []
    try run { row in rows.append(row) }
    return rows
  }
}
