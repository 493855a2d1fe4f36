/// The timed events of a whole trace in one global time order, merged across threads.
///
/// Each thread's chunks are in time order, but the chunks of different threads overlap and
/// reach the file in any order. The stream keeps a min-heap of open chunks keyed by their next
/// event, and opens a chunk (reads, checks and decompresses its payload) only when the merge
/// reaches the chunk's base time, so it holds about one chunk per live thread.
///
/// At equal times, allocations come before RSS samples and frees, and then chunks in the
/// order they were opened, so the order is deterministic and a free never precedes its
/// allocation across threads.
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
  private var open = MinHeap<OpenChunk>()
  private var openedCount: UInt64 = 0

  /// Stacks, categories and modules met so far. Complete once ``next()`` returned `nil`.
  public private(set) var metadata = TraceMetadata()
  /// The number of events returned so far.
  public private(set) var eventCount: UInt64 = 0

  init(reader: TraceReader) {
    self.reader = reader
    self.pending = reader.chunks.enumerated()
      .sorted { ($0.element.baseTime, $0.offset) < ($1.element.baseTime, $1.offset) }
      .map(\.element)
  }

  /// Returns the next event in time order, or `nil` after the last one.
  ///
  /// - Throws: ``TraceError`` when a chunk's payload is damaged; the error names its offset.
  public mutating func next() throws(TraceError) -> TraceEvent? {
    while nextPending < pending.count {
      let candidate = pending[nextPending]
      if let earliest = open.min, candidate.baseTime > earliest.event.time { break }
      nextPending += 1
      try openChunk(candidate)
    }
    guard var earliest = open.popMin() else { return nil }
    let event = earliest.event
    if let following = try earliest.cursor.nextEvent(metadata: &metadata) {
      earliest.event = following
      open.push(earliest)
    }
    eventCount &+= 1
    return event
  }

  /// Reads the rest of the trace for its metadata only, dropping the events.
  ///
  /// Call this after stopping early (at a time limit, say): stacks and categories may be
  /// defined after the events that use them.
  public mutating func drainMetadata() throws(TraceError) {
    while try next() != nil {}
  }

  private mutating func openChunk(_ chunk: ChunkHeader) throws(TraceError) {
    let payload = try reader.payload(of: chunk)
    var cursor = ChunkCursor(chunk: chunk, payload: payload, path: reader.path)
    openedCount &+= 1
    // A chunk of metadata only (the shim's own thread, say) is used up here.
    guard let first = try cursor.nextEvent(metadata: &metadata) else { return }
    open.push(OpenChunk(cursor: cursor, event: first, order: openedCount))
  }
}

/// A chunk being merged, with its next event.
private struct OpenChunk: Comparable {
  var cursor: ChunkCursor
  var event: TraceEvent
  let order: UInt64

  private var key: (UInt64, Int, UInt64) {
    let rank =
      switch event {
      case .alloc: 0
      case .rss: 1
      case .free: 2
      }
    return (event.time, rank, order)
  }

  static func < (lhs: OpenChunk, rhs: OpenChunk) -> Bool { lhs.key < rhs.key }
  static func == (lhs: OpenChunk, rhs: OpenChunk) -> Bool { lhs.key == rhs.key }
}
