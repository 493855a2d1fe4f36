import HeaplineTrace

/// A trace's events, handed out a few events after they are read, so that a pass can start
/// loading what each one will touch before it applies it.
///
/// A pass over millions of live blocks spends most of its time waiting for its live table: each
/// insert and removal lands on a random slot, a cache miss. Reading ``depth`` events ahead and
/// prefetching their slots (``LiveTable/prefetch(_:)``) lets those misses overlap instead of
/// following one another. The events come out in the stream's order, unchanged.
///
/// ```swift
/// var events = LookaheadEvents(reader.events())
/// while let event = try events.next(prefetching: { live.prefetch($0) }) { … }
/// let metadata = events.stream.metadata
/// ```
struct LookaheadEvents {
  /// Events read from the stream and not handed out yet: at most ``depth``.
  static let depth = 16
  /// The underlying stream, read ahead of what ``next(prefetching:)`` returned.
  private(set) var stream: TraceEventStream
  private var ring: [TraceEvent?] = Array(repeating: nil, count: depth)
  private var head = 0
  private var held = 0
  private var ended = false

  init(_ stream: TraceEventStream) { self.stream = stream }

  /// The next event, after calling `prefetch` with the id of each allocation or free read
  /// from the stream meanwhile.
  mutating func next(prefetching prefetch: (AllocID) -> Void) throws(TraceError) -> TraceEvent? {
    while !ended && held < Self.depth {
      guard let event = try stream.next() else {
        ended = true
        break
      }
      switch event {
      case .alloc(let alloc): prefetch(alloc.id)
      case .free(let free): prefetch(free.id)
      default: break
      }
      ring[(head + held) % Self.depth] = event
      held += 1
    }
    guard held > 0 else { return nil }
    var event: TraceEvent? = nil
    swap(&event, &ring[head])  // moved out: a copy of an event is a call, once per event
    head = (head + 1) % Self.depth
    held -= 1
    return event
  }

  /// Reads the rest of the trace for its metadata only (``TraceEventStream/drainMetadata()``),
  /// dropping the events read ahead.
  mutating func drainMetadata() throws(TraceError) {
    ring = Array(repeating: nil, count: Self.depth)
    held = 0
    if !ended { try stream.drainMetadata() }
    ended = true
  }
}
