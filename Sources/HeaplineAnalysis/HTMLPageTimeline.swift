import HeaplineTrace

/// The page's timeline: the rows that `heapline timeline` writes, as arrays.
enum HTMLPageTimeline {
  /// The columns of each row, in order; the category columns follow them.
  static let columns = [
    "end_ns", "live_bytes", "live_blocks", "allocations", "frees", "peak_live_bytes",
    "backing_store_bytes", "rss_bytes", "is_peak",
  ]

  /// Every row of `scan`, with its marks (memory warnings among them) by row.
  static func json(_ scan: TimelineScan) throws(AnalysisError) -> JSONValue {
    var rows: [JSONValue] = []
    var marks: [JSONValue] = []
    try scan.run { row in
      for mark in row.marks { marks.append(.array([.signed(rows.count), .string(mark)])) }
      let fixed: [JSONValue] = [
        .unsigned(row.endTime), .unsigned(row.liveBytes), .unsigned(row.liveBlocks),
        .unsigned(row.allocationCount), .unsigned(row.freeCount), .unsigned(row.peakLiveBytes),
        .unsigned(row.backingStoreBytes), .unsigned(row.rssBytes), .bool(row.isPeak),
      ]
      rows.append(.array(fixed + row.categoryLiveBytes.map { .unsigned($0) }))
    }
    return .object([
      ("interval_ns", .unsigned(scan.options.interval)),
      ("end_ns", .unsigned(scan.endTime)),
      ("peak_live_bytes", .unsigned(scan.peakLiveBytes)),
      ("columns", .array(columns.map { .string($0) })),
      ("categories", .array(scan.categoryColumns.map { .string($0) })),
      ("rows", .array(rows)),
      ("marks", .array(marks)),
    ])
  }
}
