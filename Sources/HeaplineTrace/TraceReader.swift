/// Opens a trace file, checks its header and every chunk, and indexes the chunks.
///
/// Opening reads the file once, chunk by chunk, to check each chunk's header fields and its
/// checksum (which covers header and payload), so every field the index holds is one the
/// writer wrote. Payloads are read again (with `pread`), checked and decompressed one at a
/// time while ``events()`` is iterated, so a trace of any size takes about one chunk per live
/// thread of memory.
///
/// ```swift
/// let reader = try TraceReader(path: "app.trace")
/// for notice in try reader.notices() { print(notice) }
/// var events = reader.events()
/// while let event = try events.next() {
///   if case .alloc(let alloc) = event { print(alloc.size) }
/// }
/// ```
public final class TraceReader: Sendable {
  /// The path the trace was opened from.
  public let path: String
  /// The file header.
  public let header: TraceHeader
  /// The file's size when it was opened.
  public let fileSize: UInt64
  /// The events chunks, in file order.
  public let chunks: [ChunkHeader]
  /// The SYMBOLS chunks: frames symbolized when the recording finished (``storedSymbols()``).
  public let symbolChunks: [ChunkHeader]
  /// The trailer, when the trace was finished cleanly.
  public let trailer: TraceTrailer?
  /// The trailer chunk's header, when there is one.
  public let trailerChunk: ChunkHeader?
  /// The partial chunk at the end of a trace that was cut short, which was not read.
  public let cutShort: CutShort?
  /// For each chunk that its thread followed with another: the next chunk's first alloc
  /// counter, which this chunk's ALLOC records must reach exactly.
  let nextAllocCounter: [UInt64: UInt64]

  let file: TraceFile

  /// Opens, checks and indexes the trace at `path`.
  ///
  /// - Throws: ``TraceError`` when the file cannot be opened, is not a regular file, its header
  ///   is not a version 3 trace header, a chunk is damaged or out of order, or the chunks do
  ///   not add up to the trailer. A partial chunk at the end is not an error: see
  ///   ``cutShort``.
  public init(path: String) throws(TraceError) {
    let file = try TraceFile(path: path)
    self.file = file
    self.path = path
    self.fileSize = file.size
    let headerSize: Int
    (header, headerSize) = try Self.readFileHeader(file)
    let index = try Self.indexChunks(file, from: UInt64(headerSize))
    chunks = index.chunks
    symbolChunks = index.symbolChunks
    trailer = index.trailer
    trailerChunk = index.trailerChunk
    cutShort = index.cut
    nextAllocCounter = index.nextAllocCounter
  }

  /// Whether the trace ends with a trailer. A trace without one was cut short (the process was
  /// killed, or is still running) and is read up to its last complete chunk.
  public var isComplete: Bool { trailer != nil }

  /// Offset of the last complete events chunk, or `nil` when there is none.
  public var lastCompleteChunkOffset: UInt64? { chunks.last?.offset }

  /// A one-line warning for traces without a trailer, `nil` for complete ones.
  public var incompletenessWarning: String? {
    guard !isComplete else { return nil }
    let read =
      chunks.isEmpty
      ? "no complete chunk" : "\(chunks.count) complete chunks up to offset \(chunks.last!.offset)"
    if let cut = cutShort {
      return "trace '\(path)' was cut short: \(cut.bytes) bytes of a partial chunk at offset"
        + " \(cut.offset) were not read (read \(read))"
    }
    return "trace '\(path)' has no trailer (the process was killed or is still running);"
      + " read \(read)"
  }

  /// Nanoseconds from the start time to the end of recording, from the trailer; for a trace cut
  /// short, the base time of its latest chunk (a lower bound).
  public var endTimeLowerBound: UInt64 {
    trailer?.endTime ?? chunks.map(\.baseTime).max() ?? 0
  }

  /// A stream of the trace's timed events in time order, across all threads. Without
  /// `leakBlocks`, its metadata keeps each leak scan's summary but not its blocks, edges and
  /// graph (``TraceMetadata/keepsLeakBlocks``), for the passes that do not show them; with
  /// them, those of the scans that `scans` selects.
  public func events(leakBlocks: Bool = true, keeping scans: LeakScanSelection = .all)
    -> TraceEventStream
  {
    TraceEventStream(reader: self, leakBlocks: leakBlocks, keeping: scans)
  }
}
