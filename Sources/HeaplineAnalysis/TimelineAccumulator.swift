import HeaplineTrace

/// The row pass of a timeline: applies events in time order and hands over each row as soon
/// as its step is over. It holds the live blocks and the one row in progress, nothing else.
///
/// Step `k` covers the times `(k·interval, (k+1)·interval]`, with time 0 in step 0, so a row
/// shows what `heapline report --at` shows for the row's end. The allocation that first brings
/// live bytes to the plan's peak closes an extra row there, and the step goes on in a new row.
struct TimelineAccumulator {
  private let interval: UInt64
  private let peakLiveBytes: UInt64
  private let columnOfCategory: [CategoryID: Int]
  /// The columns of the categories met so far, by slot: the dictionary is asked once each.
  private var categorySlots = IDSlots<CategoryID>()
  private var columnOfSlot: [Int] = []
  /// The column for the categories without one of their own; -1 without columns.
  private let otherColumn: Int
  /// The live blocks, each by its kind (``BlockKinds``), and each kind's column.
  private var live = LiveTable<Int32>()
  private var kinds = BlockKinds()
  private var columnOfKind: [Int] = []
  /// Backing stores live now, and their columns.
  private var backingStores: TimelineBackingStoreTracker
  private var step: UInt64 = 0
  private var row: TimelineRow
  private var peakRowDone = false
  private var lastTime: UInt64 = 0

  /// The most live blocks held at once.
  var maxTrackedBlocks: Int { live.maxCount }

  /// See ``LookaheadEvents``.
  mutating func prefetch(_ id: AllocID) { live.prefetch(id) }

  init(plan: TimelinePlan, interval: UInt64) {
    self.interval = interval
    peakLiveBytes = plan.peakLiveBytes
    columnOfCategory = plan.columnOfCategory
    otherColumn = plan.columnNames.count - 1
    row = TimelineRow(endTime: interval)
    backingStores = TimelineBackingStoreTracker(columnOf: plan.backingColumnOfCategory)
    row.categoryBackingStoreBytes = Array(repeating: 0, count: plan.backingColumnNames.count)
    row.categoryLiveBytes = Array(repeating: 0, count: plan.columnNames.count)
    // Without allocations there is no peak to mark.
    peakRowDone = plan.peakLiveBytes == 0
  }

  /// Applies one event, first handing over the rows of every step that ended before it.
  mutating func apply<E: Error>(_ event: TraceEvent, emit: (TimelineRow) throws(E) -> Void)
    throws(E)
  {
    lastTime = max(lastTime, event.time)
    let eventStep = event.time == 0 ? 0 : (event.time - 1) / interval
    while step < eventStep { try closeStep(emit) }
    switch event {
    case .alloc(let alloc):
      let (kind, isNew) = kinds.kind(of: alloc)
      if isNew {
        let slot = categorySlots.slot(adding: alloc.category)
        if slot == columnOfSlot.count {
          columnOfSlot.append(columnOfCategory[alloc.category] ?? otherColumn)
        }
        columnOfKind.append(columnOfSlot[slot])
      }
      let column = columnOfKind[Int(kind)]
      if let old = live.insert(alloc.id, kind) { retire(old) }
      row.liveBytes &+= alloc.size
      row.liveBlocks &+= 1
      if !alloc.isCarriedOver { row.allocationCount &+= 1 }
      if column >= 0 { row.categoryLiveBytes[column] &+= alloc.size }
      row.peakLiveBytes = max(row.peakLiveBytes, row.liveBytes)
      if !peakRowDone && row.liveBytes == peakLiveBytes {
        peakRowDone = true
        var peakRow = row
        peakRow.endTime = alloc.time
        peakRow.isPeak = true
        try emit(peakRow)
        startRow(endTime: row.endTime)
      }
    case .free(let free):
      guard let block = live.remove(free.id) else { return }
      retire(block)
      row.freeCount &+= 1
    case .rss(let sample):
      row.rssBytes = sample.residentBytes
    case .mark(let mark):
      row.marks.append(mark.kind == .memoryWarning ? "memory warning: \(mark.name)" : mark.name)
    case .backingStore(let store):
      backingStores.apply(store, row: &row)
    case .memory:
      // A warning's details; the warning itself is a MARK of kind 2, shown above.
      break
    }
  }

  /// Hands over the rows up to the end of the trace: empty steps up to it, then the last
  /// row, which ends at `endTime` (or at the last event, if one came later).
  mutating func finish<E: Error>(endTime: UInt64, emit: (TimelineRow) throws(E) -> Void)
    throws(E)
  {
    let end = max(endTime, lastTime)
    let lastStep = end == 0 ? 0 : (end - 1) / interval
    while step < lastStep { try closeStep(emit) }
    row.endTime = end
    try emit(row)
  }

  private mutating func retire(_ kind: Int32) {
    let size = kinds.sizes[Int(kind)]
    let column = columnOfKind[Int(kind)]
    row.liveBytes &-= size
    row.liveBlocks &-= 1
    if column >= 0 { row.categoryLiveBytes[column] &-= size }
  }

  private mutating func closeStep<E: Error>(_ emit: (TimelineRow) throws(E) -> Void) throws(E) {
    try emit(row)
    step += 1
    let (end, overflow) = (step + 1).multipliedReportingOverflow(by: interval)
    startRow(endTime: overflow ? .max : end)
  }

  /// Starts the next row with the state the last one ended in.
  private mutating func startRow(endTime: UInt64) {
    row.endTime = endTime
    row.allocationCount = 0
    row.freeCount = 0
    row.peakLiveBytes = row.liveBytes
    row.marks.removeAll()
    row.isPeak = false
  }
}
