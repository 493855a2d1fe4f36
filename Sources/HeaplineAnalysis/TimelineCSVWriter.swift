import HeaplineTrace

/// Writes a timeline as RFC 4180 CSV, one record per row, as <doc:TimelineCSV> describes.
///
/// ```swift
/// var output = try FileOutput(path: "timeline.csv")
/// let options = try TimelineOptions(interval: .milliseconds(100))
/// try TimelineCSVWriter.write(TraceReader(path: "app.trace"), options: options, to: &output)
/// try output.close()
/// ```
public enum TimelineCSVWriter {
  /// Streams the timeline of `reader` to `output`: the header, then each row as soon as the
  /// scan completes it. Returns the scan, whose counters tell how much it held.
  @discardableResult
  public static func write<Output: TextOutput>(
    _ reader: TraceReader, options: TimelineOptions, to output: inout Output
  ) throws(AnalysisError) -> TimelineScan {
    let scan = try TimelineScan(reader: reader, options: options)
    try output.write(
      header(categoryColumns: scan.categoryColumns, backingStoreColumns: scan.backingStoreColumns))
    try scan.run { row throws(AnalysisError) in try output.write(record(row)) }
    return scan
  }

  /// The header record.
  public static func header(categoryColumns: [String], backingStoreColumns: [String] = [])
    -> String
  {
    let fixed = [
      "time_s", "live_bytes", "live_blocks", "allocations", "frees", "peak_live_bytes",
      "backing_store_bytes", "rss_bytes",
    ]
    return CSV.record(
      fixed + categoryColumns.map { "live_bytes:" + $0 }
        + backingStoreColumns.map { "backing_bytes:" + $0 } + ["marker"])
  }

  /// The record of one row.
  public static func record(_ row: TimelineRow) -> String {
    var fields = [
      CSV.seconds(row.endTime), String(row.liveBytes), String(row.liveBlocks),
      String(row.allocationCount), String(row.freeCount), String(row.peakLiveBytes),
      String(row.backingStoreBytes), row.rssBytes.map { String($0) } ?? "",
    ]
    fields += row.categoryLiveBytes.map { String($0) }
    fields += row.categoryBackingStoreBytes.map { String($0) }
    fields.append(row.marks.joined(separator: "; "))
    return CSV.record(fields)
  }
}
