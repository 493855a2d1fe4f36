import HeaplineTrace

/// A trace's events for a pass: read on a thread of their own (``EventPipe``) when
/// ``TraceReading/usesSecondThread`` says so, and handed out a few events after the pass
/// could first see them, so that it can start loading what each one will touch before it
/// applies it.
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
  /// Events read at a time on the calling thread.
  private static let inlineBatch = 256
  /// The thread that reads the events, or nil to read them on the calling thread, from
  /// `inline` (``TraceReading/usesSecondThread``).
  private let pipe: EventPipe.Handle?
  private var inline: TraceEventStream?
  /// An error met on the calling thread, thrown once the events before it are handed out.
  private var inlineError: TraceError?
  private var batch: [TraceEvent] = []
  private var index = 0
  private var ended: TraceEventStream?
  /// The events handed out so far.
  private(set) var eventCount: UInt64 = 0

  init(_ stream: TraceEventStream, secondThread: Bool = TraceReading.usesSecondThread) {
    if secondThread {
      pipe = EventPipe.start(stream)
    } else {
      pipe = nil
      inline = stream
    }
  }

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
      guard let next = try nextBatch() else {
        if ended == nil { ended = try pipe?.finalStream() ?? inline }
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

  private mutating func nextBatch() throws(TraceError) -> [TraceEvent]? {
    if let pipe { return try pipe.nextBatch() }
    if let error = inlineError { throw error }
    var events: [TraceEvent] = []
    events.reserveCapacity(Self.inlineBatch)
    do {
      try inline!.next(into: &events, limit: Self.inlineBatch)
    } catch {
      inlineError = error
      if events.isEmpty { throw error }
    }
    return events.isEmpty ? nil : events
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
    guard ended == nil else { return }
    if let pipe {
      ended = try pipe.drain()
    } else {
      if let error = inlineError { throw error }
      try inline!.drainMetadata()
      ended = inline
    }
  }
}
