import HeaplineTrace

/// A trace's events for a pass: read on a thread of their own (``EventPipe``), and handed out
/// a few events after the pass could first see them, so that it can start loading what each
/// one will touch before it applies it.
///
/// A pass over millions of live blocks spends much of its time waiting for its live table:
/// each insert and removal can land on a slot not in the cache. Prefetching the slot of the
/// event ``depth`` places ahead (``LiveTable/prefetch(_:)``) lets those misses overlap instead
/// of following one another. The events come out in the stream's order, unchanged.
///
/// ```swift
/// var events = LookaheadEvents(reader.events())
/// while let event = try events.next(prefetching: { live.prefetch($0) }) { … }
/// let metadata = events.stream.metadata
/// ```
struct LookaheadEvents {
  /// How far ahead of the event handed out the prefetch reaches.
  static let depth = 16
  private let pipe: EventPipe.Handle
  private var batch: [TraceEvent] = []
  private var index = 0
  private var ended: TraceEventStream?
  /// The events handed out so far.
  private(set) var eventCount: UInt64 = 0

  init(_ stream: TraceEventStream) { pipe = EventPipe.start(stream) }

  /// The stream as reading left it, its metadata complete: after ``next(prefetching:)``
  /// returned `nil`, or after ``drainMetadata()``.
  var stream: TraceEventStream {
    guard let ended else { preconditionFailure("the stream is read to its end first") }
    return ended
  }

  /// The next event, after calling `prefetch` with the id of the allocation or free
  /// ``depth`` events after it.
  mutating func next(prefetching prefetch: (AllocID) -> Void) throws(TraceError) -> TraceEvent? {
    if index == batch.count {
      guard let next = try pipe.nextBatch() else {
        if ended == nil { ended = try pipe.finalStream() }
        return nil
      }
      batch = next
      index = 0
      for event in batch.prefix(Self.depth) { Self.prefetch(event, prefetch) }
    }
    if index + Self.depth < batch.count { Self.prefetch(batch[index + Self.depth], prefetch) }
    // Moved out, not copied: a copy of an event is a call, once per event of the trace.
    var event = TraceEvent.rss(RSSSample(time: 0, residentBytes: 0))
    swap(&event, &batch[index])
    index += 1
    eventCount += 1
    return event
  }

  private static func prefetch(_ event: TraceEvent, _ prefetch: (AllocID) -> Void) {
    switch event {
    case .alloc(let alloc): prefetch(alloc.id)
    case .free(let free): prefetch(free.id)
    default: break
    }
  }

  /// Stops handing out events, and reads the rest of the trace for its metadata only
  /// (``TraceEventStream/drainMetadata()``).
  mutating func drainMetadata() throws(TraceError) {
    batch = []
    index = 0
    if ended == nil { ended = try pipe.drain() }
  }
}
