import HeaplineTrace

/// Writes the list of a trace's objects as RFC 4180 CSV, in allocation order, as
/// <doc:ObjectListCSV> describes.
///
/// One pass over the trace stores a fixed-size record per allocation in a temporary file (a
/// free fills in its record's free time), so memory holds only the live blocks; then the
/// records are read back in order, the innermost frames of the stacks they use are
/// symbolized in one batch, and the rows are written.
///
/// ```swift
/// var output = try FileOutput(path: "objects.csv")
/// try ObjectListWriter.write(
///   TraceReader(path: "app.trace"), options: ObjectListOptions(category: "MyApp.Image"),
///   symbolizer: Symbolizer(), to: &output)
/// ```
public enum ObjectListWriter {
  /// What a write did and held.
  public struct Summary: Hashable, Sendable {
    /// Allocations in the trace (or up to ``ObjectListOptions/liveAt``).
    public var allocationCount: UInt64 = 0
    /// Rows written.
    public var rowCount: UInt64 = 0
    /// The most live blocks held at once: the only memory that grows with the trace.
    public var maxTrackedBlocks = 0
    /// Distinct return addresses symbolized.
    public var symbolizedFrameCount = 0
  }

  /// The header record.
  public static let header = CSV.record([
    "index", "alloc_time_s", "free_time_s", "address", "size", "category", "stack_id",
    "top_frame", "top_frame_source",
  ])

  /// Lists the objects of `reader` that `options` selects.
  ///
  /// - Throws: ``AnalysisError/unknownCategory(_:path:)`` when no allocation has the
  ///   category asked for, ``AnalysisError/trace(_:)`` for a damaged trace, and
  ///   ``AnalysisError/outputFailed(path:_:)`` when writing fails.
  @discardableResult
  public static func write<Output: TextOutput>(
    _ reader: TraceReader, options: ObjectListOptions, symbolizer: Symbolizer?,
    style: FrameStyle = FrameStyle(), to output: inout Output
  ) throws(AnalysisError) -> Summary {
    var summary = Summary()
    let records = try ObjectRecordFile()
    var live = LiveTable<UInt64>()
    var categoriesSeen: Set<CategoryID> = []
    var recentCategories = RecentKeys(places: 256)
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    while let event = try events.nextEvent(prefetching: { live.prefetch($0) }) {
      switch event {
      case .alloc(let alloc):
        // Later allocations cannot be live at `liveAt`; frees still matter.
        if let liveAt = options.liveAt, alloc.time > liveAt { continue }
        _ = live.insert(alloc.id, records.count)
        if recentCategories.isNew(alloc.category.rawValue) { categoriesSeen.insert(alloc.category) }
        try records.append(
          .init(
            allocTime: alloc.time, freeTime: ObjectRecordFile.Record.notFreed,
            address: alloc.address.rawValue, size: alloc.size, category: alloc.category.rawValue,
            stack: alloc.stack.rawValue))
      case .free(let free):
        guard let index = live.remove(free.id) else { continue }
        try records.setFreeTime(of: index, to: free.time)
      default:
        continue
      }
    }
    summary.allocationCount = records.count
    summary.maxTrackedBlocks = live.maxCount
    let metadata = events.stream.metadata
    let wanted = try selectedCategories(
      categoriesSeen, named: options.category, metadata: metadata, path: reader.path)
    func isSelected(_ record: ObjectRecordFile.Record) -> Bool {
      guard wanted?.contains(CategoryID(record.category)) ?? true else { return false }
      guard let liveAt = options.liveAt else { return true }
      return record.allocTime <= liveAt && record.freeTime > liveAt
    }
    // The distinct stacks of the selected rows, then their first user frames.
    var stacks: Set<UInt64> = []
    var recentStacks = RecentKeys(places: 4096)
    try records.forEachRecord { _, record throws(AnalysisError) in
      if isSelected(record), recentStacks.isNew(record.stack) { stacks.insert(record.stack) }
    }
    let topFrames = TopFrames(
      stacks: stacks, metadata: metadata, symbolizer: symbolizer ?? Symbolizer(toolPath: nil),
      innermost: style.showsHiddenFrames)
    summary.symbolizedFrameCount = topFrames.symbolizedFrameCount
    var rows = ObjectRows(metadata: metadata, topFrames: topFrames.frames, style: style)
    var text = TextBytes()
    text.append(header)
    try records.forEachRecord { index, record throws(AnalysisError) in
      guard isSelected(record) else { return }
      rows.append(index: index, record, to: &text)
      try text.flush(to: &output)
      summary.rowCount += 1
    }
    try text.flush(to: &output, ifOver: 0)
    return summary
  }

  /// The ids of the category `requested` names among those seen (``CategoryLookup``); `nil`
  /// for all categories.
  private static func selectedCategories(
    _ seen: Set<CategoryID>, named requested: String?, metadata: TraceMetadata, path: String
  ) throws(AnalysisError) -> Set<CategoryID>? {
    guard let requested else { return nil }
    let name = try CategoryLookup.fullName(
      requested, among: seen.map { metadata.category($0) }, path: path)
    return seen.filter { metadata.category($0).name == name }
  }
}

/// The last key met at each of a few places, with a value: a lookup that hashes (a set's insert,
/// a dictionary's find) is needed only for a key not met at its place just before. Rows and
/// allocations name few categories and stacks, again and again.
struct RecentKeys<Value> {
  private var keys: [UInt64]
  private var values: [Value]

  /// Each place starts with a number that is not one of its keys (those that fall there are
  /// equal to it modulo `places`), so that every key, `UInt64.max` too, is unknown at first.
  init(places: Int, empty: Value) {
    precondition(places >= 2)
    keys = (0..<places).map { UInt64($0 + 1) }
    values = Array(repeating: empty, count: places)
  }

  private func place(_ key: UInt64) -> Int {
    Int(truncatingIfNeeded: key % UInt64(keys.count))
  }

  /// The value of `key` when it is the last key met at its place.
  func value(of key: UInt64) -> Value? {
    let place = place(key)
    return keys[place] == key ? values[place] : nil
  }

  /// Makes `key`, with `value`, the last key met at its place.
  mutating func remember(_ key: UInt64, _ value: Value) {
    let place = place(key)
    keys[place] = key
    values[place] = value
  }
}

extension RecentKeys where Value == Void {
  init(places: Int) { self.init(places: places, empty: ()) }

  /// Whether `key` was not the last key met at its place; it is now.
  mutating func isNew(_ key: UInt64) -> Bool {
    guard value(of: key) == nil else { return false }
    remember(key, ())
    return true
  }
}
