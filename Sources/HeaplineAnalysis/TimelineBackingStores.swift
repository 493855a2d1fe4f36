import HeaplineTrace

/// The timeline's per-category backing-store columns (`backing_bytes:NAME`), planned in the
/// pre-pass: one for every category that ever held a backing store (they are few: images,
/// buffers), the one that held most at once first, then by name.
struct TimelineBackingStorePlan {
  private var live: [UInt64: (bytes: UInt64, category: CategoryID)] = [:]
  private var current: [CategoryID: UInt64] = [:]
  private var peak: [CategoryID: UInt64] = [:]

  mutating func apply(_ store: BackingStoreEvent) {
    if let old = live.removeValue(forKey: store.id) {
      current[old.category, default: 0] &-= old.bytes
    }
    guard store.kind == .allocated else { return }
    live[store.id] = (store.bytes, store.category)
    current[store.category, default: 0] &+= store.bytes
    peak[store.category] = max(peak[store.category] ?? 0, current[store.category] ?? 0)
  }

  /// The column of each category, and the columns' names.
  func columns(metadata: TraceMetadata) -> (columnOf: [CategoryID: Int], names: [String]) {
    let ranked = peak.map { (id: $0.key, name: metadata.category($0.key).name, peak: $0.value) }
      .sorted { ($1.peak, $0.name, $0.id) < ($0.peak, $1.name, $1.id) }
    var columnOf: [CategoryID: Int] = [:]
    for (column, category) in ranked.enumerated() { columnOf[category.id] = column }
    return (columnOf, ranked.map(\.name))
  }
}

/// Keeps a row's ``TimelineRow/backingStoreBytes`` and its per-category columns up to date in
/// the row pass. Backing stores lie beside live bytes, never in them, so the malloc figures
/// keep matching the report.
struct TimelineBackingStoreTracker {
  private let columnOf: [CategoryID: Int]
  /// Stores live now, by the id their reporter gave them.
  private var live: [UInt64: (bytes: UInt64, column: Int)] = [:]

  init(columnOf: [CategoryID: Int]) {
    self.columnOf = columnOf
  }

  mutating func apply(_ store: BackingStoreEvent, row: inout TimelineRow) {
    if let old = live.removeValue(forKey: store.id) {
      row.backingStoreBytes &-= old.bytes
      if old.column >= 0 { row.categoryBackingStoreBytes[old.column] &-= old.bytes }
    }
    guard store.kind == .allocated else { return }
    let column = columnOf[store.category] ?? -1
    live[store.id] = (store.bytes, column)
    row.backingStoreBytes &+= store.bytes
    if column >= 0 { row.categoryBackingStoreBytes[column] &+= store.bytes }
  }
}
