import HeaplineTrace

/// What the timeline must know before its first row: the peak of live bytes (to insert the
/// peak row), the end of the trace (for the last row), and which categories get a column.
///
/// It comes from a pre-pass over the events that keeps one counter per category and the live
/// blocks, so, like the row pass, its memory does not grow with the number of events.
struct TimelinePlan {
  /// The most bytes live at any moment: the report's peak.
  var peakLiveBytes: UInt64 = 0
  /// The end of the trace: the trailer's end time, or the last event's time if later.
  var endTime: UInt64 = 0
  /// The column of each category that has one of its own.
  var columnOfCategory: [CategoryID: Int] = [:]
  /// Column names: the top categories, then `other`. Empty when rows show totals only.
  var columnNames: [String] = []
  /// The most live blocks the pre-pass held at once.
  var maxTrackedBlocks = 0
  /// The backing-store column of each category that held a store.
  var backingColumnOfCategory: [CategoryID: Int] = [:]
  /// Backing-store column names. Empty when rows show totals only.
  var backingColumnNames: [String] = []

  /// One category's figures in the pre-pass.
  private struct CategoryPeak {
    var live: UInt64 = 0
    var maxLive: UInt64 = 0
    var total: UInt64 = 0
  }

  init(reader: TraceReader, grouping: TimelineOptions.Grouping) throws(TraceError) {
    var events = LookaheadEvents(reader.events())
    var live = LiveTable<Int32>()  // each block's kind (BlockKinds)
    var kinds = BlockKinds()
    var slotOfKind: [Int] = []
    var slots = IDSlots<CategoryID>()
    var categories: [CategoryPeak] = []
    var liveBytes: UInt64 = 0
    var lastTime: UInt64 = 0
    var backing = TimelineBackingStorePlan()
    while let event = try events.next(prefetching: { live.prefetch($0) }) {
      lastTime = max(lastTime, event.time)
      switch event {
      case .alloc(let alloc):
        let (kind, isNew) = kinds.kind(of: alloc)
        if isNew {
          let slot = slots.slot(adding: alloc.category)
          if slot == categories.count { categories.append(CategoryPeak()) }
          slotOfKind.append(slot)
        }
        let slot = slotOfKind[Int(kind)]
        if let old = live.insert(alloc.id, kind) {
          liveBytes &-= kinds.sizes[Int(old)]
          categories[slotOfKind[Int(old)]].live &-= kinds.sizes[Int(old)]
        }
        liveBytes &+= alloc.size
        peakLiveBytes = max(peakLiveBytes, liveBytes)
        categories[slot].live &+= alloc.size
        categories[slot].total &+= alloc.size
        categories[slot].maxLive = max(categories[slot].maxLive, categories[slot].live)
      case .free(let free):
        guard let kind = live.remove(free.id) else { continue }
        liveBytes &-= kinds.sizes[Int(kind)]
        categories[slotOfKind[Int(kind)]].live &-= kinds.sizes[Int(kind)]
      case .backingStore(let store):
        backing.apply(store)
      default:
        break
      }
    }
    endTime = max(reader.trailer?.endTime ?? reader.endTimeLowerBound, lastTime)
    maxTrackedBlocks = live.maxCount
    guard case .categories(let top) = grouping else { return }
    // Categories whose live bytes rose highest, then those that allocated most; the name
    // breaks ties so that the columns never depend on hashing.
    let metadata = events.stream.metadata
    (backingColumnOfCategory, backingColumnNames) = backing.columns(metadata: metadata)
    let ranked = zip(slots.ids, categories).map { id, counter in
      (id: id, name: metadata.category(id).name, counter: counter)
    }.sorted { lhs, rhs in
      if lhs.counter.maxLive != rhs.counter.maxLive {
        return lhs.counter.maxLive > rhs.counter.maxLive
      }
      if lhs.counter.total != rhs.counter.total { return lhs.counter.total > rhs.counter.total }
      return (lhs.name, lhs.id) < (rhs.name, rhs.id)
    }
    for (column, category) in ranked.prefix(top).enumerated() {
      columnOfCategory[category.id] = column
      columnNames.append(category.name)
    }
    columnNames.append("other")
  }
}
