/// The timed events of a whole trace in one global time order, merged across threads.
///
/// Each thread's chunks are in time order, but the chunks of different threads overlap and
/// reach the file in any order. The stream keeps a min-heap of open chunks keyed by their next
/// event, and opens a chunk (reads, checks and decompresses its payload) only when the merge
/// reaches the chunk's base time, so it holds about one chunk per live thread.
///
/// At equal times, allocations (of malloc blocks and backing stores) come before RSS samples,
/// marks, memory events and frees, and then chunks in the order they were opened, so the order
/// is deterministic. A free never precedes its allocation across threads: times are kept to a
/// grain (1,024 ns), and a thread's ALLOC may stand behind its other events of the same grain
/// when another thread's free of that block is met, so such a free is held until the ALLOC
/// (and returned just after it), or until the merge passes its time.
///
/// ```swift
/// var stream = reader.events()
/// while let event = try stream.next() {
///   …
/// }
/// let tables = stream.metadata  // complete once the stream is exhausted
/// ```
public struct TraceEventStream {
  private let reader: TraceReader
  /// Events chunks not opened yet, by base time, then file order.
  private let pending: [ChunkHeader]
  private var nextPending = 0
  /// Open chunks, by slot. The heap orders small keys that name slots, so the merge never
  /// copies a cursor.
  private var cursors: [ChunkCursor] = []
  private var heads: [TraceEvent] = []
  private var freeSlots: [Int] = []
  private var heap = MinHeap<MergeKey>()
  private var openedCount: UInt64 = 0
  /// For the progress line: the chunks this stream has opened, of all it will.
  private let progress: TraceReadProgress.Pass

  /// Stacks, categories and modules met so far. Complete once ``next()`` returned `nil`.
  public private(set) var metadata = TraceMetadata()
  /// The number of events returned so far.
  public private(set) var eventCount: UInt64 = 0
  private var allocCount: UInt64 = 0
  private var freeCount: UInt64 = 0
  /// Frees of another thread's block met before the block's ALLOC, all of one time.
  private var heldFrees: [FreeEvent] = []
  /// Events to return before merging on, from `readyIndex`; and an event merged, not yet looked
  /// at, behind frees that were let go.
  private var ready: [TraceEvent] = []
  private var readyIndex = 0
  private var carried: TraceEvent?
  /// By thread serial: one past the highest ALLOC counter returned.
  private var allocatedThrough: [UInt64] = []

  init(reader: TraceReader, leakBlocks: Bool = true, keeping scans: LeakScanSelection = .all) {
    self.reader = reader
    metadata.keepsLeakBlocks = leakBlocks
    metadata.keptLeakScans = scans
    self.pending = reader.chunks.enumerated()
      .sorted { ($0.element.baseTime, $0.offset) < ($1.element.baseTime, $1.offset) }
      .map(\.element)
    progress = TraceReadProgress.Pass(chunks: pending.count)
  }

  /// Returns the next event in time order, or `nil` after the last one.
  ///
  /// - Throws: ``TraceError`` when a chunk's payload is damaged; the error names its offset.
  public mutating func next() throws(TraceError) -> TraceEvent? {
    guard readyIndex == ready.count, carried == nil, heldFrees.isEmpty else {
      return try nextAfterHeld()
    }
    guard let event = try merged() else { return nil }
    return holdsBack(event) ? try nextAfterHeld() : event
  }

  /// Notes an allocation returned, and holds a free that comes before its ALLOC: true then.
  @inline(__always)
  private mutating func holdsBack(_ event: TraceEvent) -> Bool {
    switch event {
    case .alloc(let alloc):
      noteAllocated(alloc.id)
    case .free(let free) where comesEarly(free):
      heldFrees.append(free)
      return true
    default:
      break
    }
    return false
  }

  /// Appends the events that ``next()`` would return, in the same order, until `batch` holds
  /// `limit` of them or the events end.
  ///
  /// A chunk that is alone in the merge (one busy thread, most of the time) is read in a loop
  /// of its own: the same steps as `next()` takes, without going round the merge for each
  /// event.
  public mutating func next(into batch: inout [TraceEvent], limit: Int) throws(TraceError) {
    while batch.count < limit {
      if readyIndex == ready.count, carried == nil, heldFrees.isEmpty {
        try openDueChunks()
        if !heap.isEmpty {
          try readAlone(into: &batch, limit: limit)
          continue
        }
      }
      guard let event = try next() else { return }
      batch.append(event)
    }
  }

  /// `next(into:limit:)` from the merge's earliest chunk: its events go straight to `batch` for
  /// as long as they come before the next chunk to open and before every other open chunk's
  /// next event. Returns after the first event that does not (the merge has it as its key
  /// now), at the chunk's end, at a free to hold, or when `batch` is full.
  ///
  /// Meanwhile the chunk's key in the heap stays that of an earlier event, as `merged()`
  /// leaves it for a chunk alone: below every other key still, and below the next chunk's base
  /// time.
  private mutating func readAlone(into batch: inout [TraceEvent], limit: Int) throws(TraceError) {
    let key = heap.min!
    let slot = key.slot
    let bound = nextPending < pending.count ? pending[nextPending].baseTime : .max
    let other = heap.secondMin
    // Before both, an event is the earliest on its time alone; at the other chunk's time, its
    // rank and order decide.
    let clear = min(bound, other?.time ?? .max)
    // The head goes out first. The events after it are appended by the chunk's cursor itself
    // while they are before `clear` and need none of the merge's care; the first event that
    // does is taken here, as `merged()` would take it, and is the head again on return.
    var current = heads[slot]
    while true {
      let delivered = deliver(current, into: &batch)
      let read: TraceEvent?
      do {
        read = try following(slot, clear: clear, bulk: delivered, into: &batch, limit: limit)
      } catch {
        // `merged()` returns an event once the one after it is read: before a damaged record,
        // the last event read is not returned. Nor is it here.
        if delivered { batch.removeLast() }
        throw error
      }
      guard let next = read else {
        _ = heap.popMin()
        freeSlots.append(slot)
        return
      }
      var stillAlone = next.time < clear
      if !stillAlone {
        let nextKey = MergeKey(next, order: key.order, slot: slot)
        stillAlone = next.time < bound && other.map { nextKey < $0 } ?? true
        if !stillAlone { heap.replaceMin(with: nextKey) }
      }
      guard delivered, stillAlone, batch.count < limit else {
        heads[slot] = next
        return
      }
      current = next
    }
  }

  /// The event after the head of the chunk in `slot`, or `nil` at its end. With `bulk`, the
  /// cursor first appends to `batch` the events it can (``ChunkCursor/appendEvents``).
  @inline(__always)
  private mutating func following(
    _ slot: Int, clear: UInt64, bulk: Bool, into batch: inout [TraceEvent], limit: Int
  ) throws(TraceError) -> TraceEvent? {
    guard bulk, batch.count < limit else { return try cursors[slot].nextEvent(metadata: &metadata) }
    var appended = ChunkCursor.Appended()
    defer {  // those appended before an error too
      eventCount &+= appended.allocations &+ appended.frees
      allocCount &+= appended.allocations
      freeCount &+= appended.frees
      if let last = appended.lastAllocation { noteAllocated(last) }
    }
    return try cursors[slot].appendEvents(
      to: &batch, before: clear, limit: limit, metadata: &metadata, appended: &appended)
  }

  /// What `merged()` and then `next()` do with an event that the merge gave: it is counted,
  /// and returned unless it is a free held back (then false).
  @inline(__always)
  private mutating func deliver(_ event: TraceEvent, into batch: inout [TraceEvent]) -> Bool {
    count(event)
    guard !holdsBack(event) else { return false }
    batch.append(event)
    return true
  }

  /// `next()` while frees are held, or events wait to be returned.
  private mutating func nextAfterHeld() throws(TraceError) -> TraceEvent? {
    if readyIndex < ready.count { return takeReady() }
    while true {
      let event: TraceEvent?
      if let waiting = carried {
        event = waiting
        carried = nil
      } else {
        event = try merged()
      }
      if let held = heldFrees.first, event.map({ $0.time > held.time }) ?? true {
        // Past their time, their ALLOCs are not coming (never recorded, or made before the
        // trace): they go as they were met, unmatched, before the event.
        ready = heldFrees.map(TraceEvent.free)
        heldFrees.removeAll(keepingCapacity: true)
        carried = event
        return takeReady()
      }
      guard let event else { return nil }
      switch event {
      case .alloc(let alloc):
        noteAllocated(alloc.id)
        if let index = heldFrees.firstIndex(where: { $0.id == alloc.id }) {
          var free = heldFrees.remove(at: index)
          free.time = max(free.time, alloc.time)
          ready.append(.free(free))
        }
        return event
      case .free(let free) where comesEarly(free):
        heldFrees.append(free)
      default:
        return event
      }
    }
  }

  private mutating func takeReady() -> TraceEvent {
    let event = ready[readyIndex]
    readyIndex += 1
    if readyIndex == ready.count {
      ready.removeAll(keepingCapacity: true)
      readyIndex = 0
    }
    return event
  }

  /// Thread serials past this are not followed: their frees are never held.
  private static let followedSerials = 1 << 16

  private mutating func noteAllocated(_ id: AllocID) {
    let serial = Int(id.threadSerial)
    guard serial < Self.followedSerials else { return }
    if serial >= allocatedThrough.count {
      let missing = serial + 1 - allocatedThrough.count
      allocatedThrough.append(contentsOf: repeatElement(0, count: missing))
    }
    allocatedThrough[serial] = max(allocatedThrough[serial], id.counter &+ 1)
  }

  /// Whether `free` is of another thread's block whose ALLOC has not been returned yet.
  private func comesEarly(_ free: FreeEvent) -> Bool {
    let serial = Int(free.id.threadSerial)
    guard free.threadSerial != free.id.threadSerial, serial < Self.followedSerials else {
      return false
    }
    return serial >= allocatedThrough.count || free.id.counter >= allocatedThrough[serial]
  }

  /// The next event of the merge of the chunks, in time order.
  @inline(__always)
  private mutating func merged() throws(TraceError) -> TraceEvent? {
    try openDueChunks()
    guard let earliest = heap.min else {
      progress.finish()
      try checkTotals()
      return nil
    }
    let slot = earliest.slot
    // The head is moved out, never copied: a copy of an event is a call, and this runs once
    // per event of the trace.
    if var event = try cursors[slot].nextEvent(metadata: &metadata) {
      // One chunk open, and its next event before any chunk not opened yet (a program with one
      // busy thread, most of the time): it stays the earliest, with no merge to do.
      let alone =
        heap.count == 1
        && (nextPending == pending.count || event.time < pending[nextPending].baseTime)
      if !alone { heap.replaceMin(with: MergeKey(event, order: earliest.order, slot: slot)) }
      swap(&event, &heads[slot])  // now the head that was, and the slot holds the one after
      count(event)
      return event
    }
    _ = heap.popMin()
    freeSlots.append(slot)
    count(heads[slot])
    return heads[slot]
  }

  /// Opens the chunks whose base time the merge has reached.
  @inline(__always)
  private mutating func openDueChunks() throws(TraceError) {
    while nextPending < pending.count {
      let candidate = pending[nextPending]
      if let earliest = heap.min, candidate.baseTime > earliest.time { break }
      nextPending += 1
      try openChunk(candidate)
    }
  }

  /// At the end of a trace with a trailer: the ALLOC and FREE records read must be those the
  /// trailer counts, or records were lost between the shim and the file.
  private func checkTotals() throws(TraceError) {
    guard let trailer = reader.trailer, let offset = reader.trailerChunk?.offset else { return }
    for (name, read, counted) in [
      ("ALLOC", allocCount, trailer.allocCount), ("FREE", freeCount, trailer.freeCount),
    ] where read != counted {
      throw TraceError(
        path: reader.path,
        reason: .trailerMismatch(
          trailer: offset, "it counts \(counted) \(name) records, the chunks hold \(read)"))
    }
  }

  /// Reads the rest of the trace for its metadata only, dropping the events.
  ///
  /// Call this after stopping early (at a time limit, say): stacks and categories may be
  /// defined after the events that use them.
  ///
  /// Metadata needs no global time order, only each thread's: the open chunks are read to their
  /// ends in the order they were opened, then the chunks not opened yet in the merge's order,
  /// without the merge (several times faster than reading the events one by one).
  public mutating func drainMetadata() throws(TraceError) {
    heldFrees.removeAll()
    ready.removeAll()
    readyIndex = 0
    carried = nil
    for key in heap.elements.sorted(by: { $0.order < $1.order }) {
      count(heads[key.slot])
      while let event = try cursors[key.slot].nextEvent(metadata: &metadata) { count(event) }
    }
    heap = MinHeap()
    for chunk in pending[nextPending...] {
      var cursor = try reader.cursor(for: chunk)
      progress.advance()
      while let event = try cursor.nextEvent(metadata: &metadata) { count(event) }
    }
    nextPending = pending.count
    progress.finish()
    try checkTotals()
  }

  private mutating func count(_ event: TraceEvent) {
    eventCount &+= 1
    switch event {
    case .alloc(let alloc) where !alloc.isCarriedOver: allocCount &+= 1
    case .free: freeCount &+= 1
    default: break
    }
  }

  private mutating func openChunk(_ chunk: ChunkHeader) throws(TraceError) {
    var cursor = try reader.cursor(for: chunk)
    openedCount &+= 1
    progress.advance()
    // A chunk of metadata only (the shim's own thread, say) is used up here.
    guard let first = try cursor.nextEvent(metadata: &metadata) else { return }
    let slot: Int
    if let free = freeSlots.popLast() {
      slot = free
      cursors[slot] = cursor
      heads[slot] = first
    } else {
      slot = cursors.count
      cursors.append(cursor)
      heads.append(first)
    }
    heap.push(MergeKey(first, order: openedCount, slot: slot))
  }
}

/// Where an open chunk's next event falls in the merge order.
private struct MergeKey: Comparable {
  let time: UInt64
  /// Allocations before RSS samples and marks before frees, at equal times.
  let rank: UInt8
  /// Order in which the chunk was opened, to keep ties deterministic.
  let order: UInt64
  let slot: Int

  init(_ event: TraceEvent, order: UInt64, slot: Int) {
    time = event.time
    switch event {
    case .alloc: rank = 0
    case .rss, .mark, .memory: rank = 1
    case .free: rank = 2
    case .backingStore(let store): rank = store.kind == .allocated ? 0 : 2
    }
    self.order = order
    self.slot = slot
  }

  static func < (lhs: MergeKey, rhs: MergeKey) -> Bool {
    (lhs.time, lhs.rank, lhs.order) < (rhs.time, rhs.rank, rhs.order)
  }

  static func == (lhs: MergeKey, rhs: MergeKey) -> Bool {
    (lhs.time, lhs.rank, lhs.order) == (rhs.time, rhs.rank, rhs.order)
  }
}
