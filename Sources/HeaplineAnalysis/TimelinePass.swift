import HeaplineTrace

/// The one pass over the events that a timeline takes. It stores a row at the end of each step
/// with the live bytes of every category, not yet in columns (``TimelineRowStore``), and learns
/// meanwhile what the columns need: the peak of live bytes, the end of the trace, and each
/// category's highest live bytes and total. ``TimelineScan`` then ranks the categories and
/// replays the rows in columns, without reading the trace again.
///
/// Step `k` covers the times `(k·interval, (k+1)·interval]`, with time 0 in step 0, so a row
/// shows what `heapline report --at` shows for the row's end. The allocation that first brings
/// live bytes to their peak is kept too (``Peak``): it becomes a row of its own, and the rest
/// of its step another.
struct TimelinePass {
  /// The state at the allocation that first reached the peak of live bytes; each category's
  /// bytes then are ``TimelineSlots/bytesAtLastPeak``.
  struct Peak {
    /// The step it falls in, which is also the stored row's index.
    var step: Int
    /// Its row, up to and including that allocation, without columns.
    var row: TimelineRow
  }

  private let interval: UInt64
  /// Steps past this are refused: their rows would be more than a timeline may have.
  private let lastAllowedStep: UInt64
  private var live = LiveTable<Int32>()  // each block's kind (BlockKinds)
  private var kinds = BlockKinds()
  private var slotOfKind: [Int] = []
  /// Categories, then backing-store categories, by slot.
  private(set) var categories = TimelineSlots()
  private(set) var backing = TimelineSlots()
  /// Backing stores live now, by their reporter's id.
  private var stores: [UInt64: (bytes: UInt64, slot: Int)] = [:]
  private var step: UInt64 = 0
  private var row: TimelineRow
  private(set) var rows = TimelineRowStore()
  private(set) var peak: Peak?
  private(set) var peakLiveBytes: UInt64 = 0
  /// The time of the allocation that last raised the peak, while the state is still the one it
  /// left: the peak is copied (``settlePeak()``) only before something else changes that
  /// state, not at every allocation of a rise, which on a growing heap is most of them.
  private var risingPeakTime: UInt64?
  private(set) var lastTime: UInt64 = 0

  /// The most live blocks held at once.
  var maxTrackedBlocks: Int { live.maxCount }

  init(interval: UInt64, maximumRowCount: UInt64) {
    self.interval = interval
    // Step k's row is row k + 1 of k + 2 with the peak's.
    lastAllowedStep = maximumRowCount - 2
    row = TimelineRow(endTime: interval)
  }

  /// See ``LookaheadEvents``.
  mutating func prefetch(_ id: AllocID) { live.prefetch(id) }

  /// Applies one event, first storing the rows of every step that ended before it.
  mutating func apply(_ event: TraceEvent) throws(AnalysisError) {
    lastTime = max(lastTime, event.time)
    let eventStep = event.time == 0 ? 0 : (event.time - 1) / interval
    guard eventStep <= lastAllowedStep else { throw TimelineScan.tooManyRows(event.time, interval) }
    if step < eventStep {
      settlePeak()
      while step < eventStep { try closeStep() }
    }
    // Any event but an allocation changes the state a rising peak left, or may: it is kept
    // first. An allocation keeps it only when it does not raise the peak (below).
    if case .alloc = event {} else { settlePeak() }
    switch event {
    case .alloc(let alloc):
      let (kind, isNew) = kinds.kind(of: alloc)
      if isNew { slotOfKind.append(categories.slot(of: alloc.category)) }
      let slot = slotOfKind[Int(kind)]
      if let old = live.insert(alloc.id, kind) {
        settlePeak()
        retire(old)
      }
      if row.liveBytes &+ alloc.size <= peakLiveBytes { settlePeak() }  // no new peak
      row.liveBytes &+= alloc.size
      row.liveBlocks &+= 1
      if !alloc.isCarriedOver { row.allocationCount &+= 1 }
      categories.add(alloc.size, to: slot)
      row.peakLiveBytes = max(row.peakLiveBytes, row.liveBytes)
      if row.liveBytes > peakLiveBytes {
        peakLiveBytes = row.liveBytes
        risingPeakTime = alloc.time
      }
    case .free(let free):
      guard let kind = live.remove(free.id) else { return }
      retire(kind)
      row.freeCount &+= 1
    case .rss(let sample):
      row.rssBytes = sample.residentBytes
    case .mark(let mark):
      row.marks.append(mark.kind == .memoryWarning ? "memory warning: \(mark.name)" : mark.name)
    case .backingStore(let store):
      if let old = stores.removeValue(forKey: store.id) {
        row.backingStoreBytes &-= old.bytes
        backing.subtract(old.bytes, from: old.slot)
      }
      guard store.kind == .allocated else { return }
      let slot = backing.slot(of: store.category)
      stores[store.id] = (store.bytes, slot)
      row.backingStoreBytes &+= store.bytes
      backing.add(store.bytes, to: slot)
    case .memory:
      // A warning's details; the warning itself is a MARK of kind 2, shown above.
      break
    }
  }

  /// Stores the rows up to the end of the trace: empty steps up to it, then the last row,
  /// which ends at `endTime` (or at the last event, if one came later).
  mutating func finish(endTime: UInt64) throws(AnalysisError) {
    let end = max(endTime, lastTime)
    let lastStep = end == 0 ? 0 : (end - 1) / interval
    guard lastStep <= lastAllowedStep else { throw TimelineScan.tooManyRows(end, interval) }
    settlePeak()
    while step < lastStep { try closeStep() }
    row.endTime = end
    try store()
  }

  private mutating func retire(_ kind: Int32) {
    let size = kinds.sizes[Int(kind)]
    row.liveBytes &-= size
    row.liveBlocks &-= 1
    categories.subtract(size, from: slotOfKind[Int(kind)])
  }

  /// Keeps the state at the peak that the last rise reached, if one is waiting.
  private mutating func settlePeak() {
    guard let time = risingPeakTime else { return }
    risingPeakTime = nil
    notePeak(at: time)
  }

  /// Keeps the state at a new peak; the categories' bytes are brought up to date only where
  /// they changed since the peak before.
  private mutating func notePeak(at time: UInt64) {
    var peakRow = row
    peakRow.endTime = time
    peakRow.isPeak = true
    peak = Peak(step: Int(step), row: peakRow)
    categories.notePeak()
    backing.notePeak()
  }

  private mutating func closeStep() throws(AnalysisError) {
    try store()
    step += 1
    let (end, overflow) = (step + 1).multipliedReportingOverflow(by: interval)
    // The state goes on into the next row; what happened in a step starts again from zero.
    row.endTime = overflow ? .max : end
    row.allocationCount = 0
    row.freeCount = 0
    row.peakLiveBytes = row.liveBytes
    row.marks.removeAll()
  }

  private mutating func store() throws(AnalysisError) {
    try rows.append(
      TimelineRowStore.Row(
        row: row, categories: categories.takeChanged(), backingStores: backing.takeChanged()))
  }
}

/// The live bytes of each category of a ``TimelinePass``, by slot, with what the pass must
/// learn of them: their highest and their total, which categories changed since the last row
/// was stored, and their bytes at the last peak of live bytes.
struct TimelineSlots {
  private var slots = IDSlots<CategoryID>()
  private(set) var bytes: [UInt64] = []
  /// Each category's highest live bytes, and the bytes allocated in it.
  private(set) var highest: [UInt64] = []
  private(set) var total: [UInt64] = []
  private var changedInRow = ChangedSlots()
  /// Each slot's bytes at the last peak (``notePeak()``). Those changed since are brought
  /// up to date at the next one, so a peak costs the slots changed since the one before.
  private(set) var bytesAtLastPeak: [UInt64] = []
  private var changedSincePeak = ChangedSlots()

  /// The categories by slot.
  var ids: [CategoryID] { slots.ids }

  mutating func slot(of id: CategoryID) -> Int {
    let slot = slots.slot(adding: id)
    if slot == bytes.count {
      bytes.append(0)
      highest.append(0)
      total.append(0)
      bytesAtLastPeak.append(0)
      changedInRow.addSlot()
      changedSincePeak.addSlot()
    }
    return slot
  }

  mutating func add(_ size: UInt64, to slot: Int) {
    bytes[slot] &+= size
    total[slot] &+= size
    highest[slot] = max(highest[slot], bytes[slot])
    changedInRow.mark(slot)
    changedSincePeak.mark(slot)
  }

  mutating func subtract(_ size: UInt64, from slot: Int) {
    bytes[slot] &-= size
    changedInRow.mark(slot)
    changedSincePeak.mark(slot)
  }

  /// The slots changed since the last call, with their bytes now.
  mutating func takeChanged() -> [(slot: Int, bytes: UInt64)] {
    defer { changedInRow.clear() }
    return changedInRow.slots.map { ($0, bytes[$0]) }
  }

  /// Keeps every slot's bytes now as those of the last peak.
  mutating func notePeak() {
    for slot in changedSincePeak.slots { bytesAtLastPeak[slot] = bytes[slot] }
    changedSincePeak.clear()
  }
}

/// The slots changed since the last ``clear()``, each once, in the order first changed.
private struct ChangedSlots {
  private var isChanged: [Bool] = []
  private(set) var slots: [Int] = []

  mutating func addSlot() { isChanged.append(false) }

  mutating func mark(_ slot: Int) {
    guard !isChanged[slot] else { return }
    isChanged[slot] = true
    slots.append(slot)
  }

  mutating func clear() {
    for slot in slots { isChanged[slot] = false }
    slots.removeAll(keepingCapacity: true)
  }
}
