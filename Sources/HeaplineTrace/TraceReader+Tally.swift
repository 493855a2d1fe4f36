/// What the events chunks of a trace hold, counted record by record: what a trailer must say.
public struct ChunkTally: Hashable, Sendable {
  /// Events chunks.
  public var chunkCount: UInt64 = 0
  /// ALLOC records.
  public var allocCount: UInt64 = 0
  /// FREE records.
  public var freeCount: UInt64 = 0
  /// The latest time of any chunk or timed record, in nanoseconds since the start time.
  public var lastTime: UInt64 = 0
  /// The sum of the LOST records.
  public var lostEvents: UInt64 = 0

  /// An empty tally.
  public init() {}
}

extension TraceReader {
  /// Counts what the events chunks hold, for a writer that finishes a trace the shim could not
  /// (`heapline record` after the process died): the trailer it appends at
  /// ``CutShort/offset`` (or at the end of the file) must count exactly these chunks and
  /// records, and end no earlier than ``ChunkTally/lastTime``.
  ///
  /// ```swift
  /// let tally = try TraceReader(path: path).tally()
  /// let trailer = TraceTrailer(
  ///   endTime: max(tally.lastTime, now), eventChunkCount: tally.chunkCount + recovered,
  ///   allocCount: tally.allocCount + recoveredAllocs, freeCount: tally.freeCount + recoveredFrees,
  ///   endReason: .endedUnfinished, lostEvents: tally.lostEvents)
  /// ```
  public func tally() throws(TraceError) -> ChunkTally {
    var tally = ChunkTally()
    var metadata = TraceMetadata()
    metadata.keepsLeakBlocks = false  // counted, not kept
    for chunk in chunks {
      tally.chunkCount += 1
      tally.lastTime = max(tally.lastTime, chunk.baseTime)
      var decoder = try cursor(for: chunk)
      while let event = try decoder.nextEvent(metadata: &metadata) {
        tally.lastTime = max(tally.lastTime, event.time)
        switch event {
        case .alloc(let alloc) where !alloc.isCarriedOver: tally.allocCount += 1
        case .free: tally.freeCount += 1
        default: break
        }
      }
      tally.lastTime = max(tally.lastTime, decoder.time)  // LOST records are timed too
    }
    tally.lostEvents = metadata.lostEvents.values.reduce(0, &+)
    return tally
  }
}

extension TraceReader {
  /// The return addresses of the stacks and the modules that the records of `chunks` define,
  /// each chunk read to its end in the order given, without merging events into time order: for
  /// a pass that needs no events and reads parts of a trace on several threads at once
  /// (`record`'s symbols). A chunk whose header says it holds no stacks or modules
  /// (``ChunkFlags/noStacksOrModules``, most chunks) is skipped unread, and of the others only
  /// the side section is read, where the shim writes them.
  public func stacksAndModules(of chunks: some Collection<ChunkHeader>) throws(TraceError)
    -> (returnAddresses: Set<UInt64>, modules: [TraceModule])
  {
    var metadata = TraceMetadata()
    metadata.keepsLeakBlocks = false  // counted, not kept
    let progress = TraceReadProgress.Pass(chunks: chunks.count)
    for chunk in chunks {
      progress.advance()
      if !chunk.flags.contains(.noStacksOrModules) { try readSide(of: chunk, into: &metadata) }
    }
    return (metadata.returnAddresses, metadata.modules)
  }
}
