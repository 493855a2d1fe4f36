import HeaplineTrace

/// Computes a trace's timeline in one pass over its events, then hands the rows over one at a
/// time, so a timeline of any length takes memory for the live blocks and a few megabytes.
///
/// The pass, when the scan is created, makes the rows with every category's live bytes
/// (``TimelinePass``), which wait in ``TimelineRowStore``, and finds the peak of live bytes,
/// the end of the trace and the top categories; ``run(_:)`` puts the stored rows in columns,
/// without reading the trace again.
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
  /// Events the pass read.
  public private(set) var eventsRead: UInt64 = 0
  /// Rows handed over so far.
  public private(set) var rowsEmitted: UInt64 = 0
  /// The most live blocks the pass held at once: the only memory that grows with the trace.
  public let maxTrackedBlocks: Int

  private let pass: TimelinePass
  /// The column of each category slot of the pass, and of each backing-store slot; -1 for
  /// none (totals only, or a backing store's category when rows show totals).
  private let columnOfSlot: [Int]
  private let backingColumnOfSlot: [Int]

  /// Bytes of stored rows that waited in a file rather than in memory.
  var rowBytesOnDisk: Int { pass.rows.bytesOnDisk }

  /// The most rows a timeline may have: ten million rows are about a gigabyte of CSV.
  public static let maximumRowCount: UInt64 = 10_000_000

  /// Runs the pass over the trace.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` when the trace is damaged.
  public init(reader: TraceReader, options: TimelineOptions) throws(AnalysisError) {
    // The end time comes from checked chunks, so the row count is bounded by the trace's real
    // length; an interval that still makes an absurd number of rows is refused, not written.
    let knownEnd = reader.trailer?.endTime ?? reader.endTimeLowerBound
    if knownEnd / options.interval + 2 > Self.maximumRowCount {
      throw Self.tooManyRows(knownEnd, options.interval)
    }
    var pass = TimelinePass(interval: options.interval, maximumRowCount: Self.maximumRowCount)
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    while let event = try events.nextEvent(prefetching: { pass.prefetch($0) }) {
      try pass.apply(event)
    }
    endTime = max(knownEnd, pass.lastTime)
    try pass.finish(endTime: endTime)
    eventsRead = events.eventCount
    self.reader = reader
    self.options = options
    peakLiveBytes = pass.peakLiveBytes
    maxTrackedBlocks = pass.maxTrackedBlocks
    guard case .categories(let top) = options.grouping else {
      (categoryColumns, backingStoreColumns) = ([], [])
      (columnOfSlot, backingColumnOfSlot) = (
        Array(repeating: -1, count: pass.categories.ids.count),
        Array(repeating: -1, count: pass.backing.ids.count)
      )
      self.pass = pass
      return
    }
    let metadata = events.stream.metadata
    // Categories whose live bytes rose highest, then those that allocated most; the name
    // breaks ties so that the columns never depend on hashing.
    let ranked = pass.categories.ids.indices.map { slot in
      let id = pass.categories.ids[slot]
      return (
        slot: slot, id: id, name: metadata.category(id).name,
        highest: pass.categories.highest[slot], total: pass.categories.total[slot]
      )
    }.sorted { lhs, rhs in
      if lhs.highest != rhs.highest { return lhs.highest > rhs.highest }
      if lhs.total != rhs.total { return lhs.total > rhs.total }
      return (lhs.name, lhs.id) < (rhs.name, rhs.id)
    }
    let kept = min(top, ranked.count)
    var columns = Array(repeating: kept, count: ranked.count)  // `other` unless in the top
    for (column, category) in ranked.prefix(kept).enumerated() { columns[category.slot] = column }
    categoryColumns = ranked.prefix(kept).map(\.name) + ["other"]
    columnOfSlot = columns
    // A backing-store column for every category that held a store: the one that held most at
    // once first, then by name.
    let stores = pass.backing.ids.indices.map { slot in
      let id = pass.backing.ids[slot]
      return (
        slot: slot, id: id, name: metadata.category(id).name, peak: pass.backing.highest[slot]
      )
    }.sorted { ($1.peak, $0.name, $0.id) < ($0.peak, $1.name, $1.id) }
    var backingColumns = Array(repeating: -1, count: stores.count)
    for (column, store) in stores.enumerated() { backingColumns[store.slot] = column }
    backingStoreColumns = stores.map(\.name)
    backingColumnOfSlot = backingColumns
    self.pass = pass
  }

  static func tooManyRows(_ end: UInt64, _ interval: UInt64) -> AnalysisError {
    .invalidInterval(
      "\(end / interval + 2) rows of \(TimeText.duration(interval)) over the trace's"
        + " \(TimeText.duration(end)) exceed \(maximumRowCount); use a longer interval")
  }

  /// Calls `body` with each row, in time order.
  public func run(_ body: (TimelineRow) throws(AnalysisError) -> Void) throws(AnalysisError) {
    rowsEmitted = 0
    var slotBytes = [UInt64](repeating: 0, count: columnOfSlot.count)
    var backingSlotBytes = [UInt64](repeating: 0, count: backingColumnOfSlot.count)
    var columns = [UInt64](repeating: 0, count: categoryColumns.count)
    var backingColumns = [UInt64](repeating: 0, count: backingStoreColumns.count)
    var index = 0
    try pass.rows.forEach { stored throws(AnalysisError) in
      Self.apply(stored.categories, to: &slotBytes, &columns, columnOf: columnOfSlot)
      Self.apply(
        stored.backingStores, to: &backingSlotBytes, &backingColumns, columnOf: backingColumnOfSlot)
      var row = stored.row
      row.categoryLiveBytes = columns
      row.categoryBackingStoreBytes = backingColumns
      if let peak = pass.peak, peak.step == index {
        rowsEmitted += 1
        try body(peakRow(peak))
        // The rest of the step, after the allocation that reached the peak.
        row.allocationCount &-= peak.row.allocationCount
        row.freeCount &-= peak.row.freeCount
        row.marks.removeFirst(peak.row.marks.count)
      }
      index += 1
      rowsEmitted += 1
      try body(row)
    }
  }

  /// Every row, in memory: for in-process tests and short traces.
  public func rows() throws(AnalysisError) -> [TimelineRow] {
    var rows: [TimelineRow] = []
    try run { row in rows.append(row) }
    return rows
  }

  /// Brings the slots a stored row names to their bytes, and their columns with them.
  private static func apply(
    _ changes: [(slot: Int, bytes: UInt64)], to slots: inout [UInt64], _ columns: inout [UInt64],
    columnOf: [Int]
  ) {
    for (slot, bytes) in changes {
      let column = columnOf[slot]
      if column >= 0 { columns[column] = columns[column] &- slots[slot] &+ bytes }
      slots[slot] = bytes
    }
  }

  /// The row at the peak, its columns from each slot's bytes then.
  private func peakRow(_ peak: TimelinePass.Peak) -> TimelineRow {
    var columns = [UInt64](repeating: 0, count: categoryColumns.count)
    var backingColumns = [UInt64](repeating: 0, count: backingStoreColumns.count)
    var slots = [UInt64](repeating: 0, count: columnOfSlot.count)
    var backingSlots = [UInt64](repeating: 0, count: backingColumnOfSlot.count)
    let atPeak = pass.categories.bytesAtLastPeak.enumerated().map { ($0.offset, $0.element) }
    let backingAtPeak = pass.backing.bytesAtLastPeak.enumerated().map { ($0.offset, $0.element) }
    Self.apply(atPeak, to: &slots, &columns, columnOf: columnOfSlot)
    Self.apply(backingAtPeak, to: &backingSlots, &backingColumns, columnOf: backingColumnOfSlot)
    var row = peak.row
    row.categoryLiveBytes = columns
    row.categoryBackingStoreBytes = backingColumns
    return row
  }
}
