/// Opens a trace file, validates its header and indexes its chunks.
///
/// The reader reads only the 48-byte chunk headers when it opens a file; payloads are read
/// (with `pread`), checked and decompressed one at a time while ``events()`` is iterated, so a
/// trace of any size takes about one chunk per live thread of memory.
///
/// ```swift
/// let reader = try TraceReader(path: "app.trace")
/// if let warning = reader.incompletenessWarning { print(warning) }
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
  /// The trailer, when the trace was finished cleanly.
  public let trailer: TraceTrailer?
  /// The trailer chunk's header, when there is one.
  public let trailerChunk: ChunkHeader?

  let file: TraceFile

  /// Opens and indexes the trace at `path`.
  ///
  /// - Throws: ``TraceError`` when the file cannot be opened, its header is not a version 1
  ///   trace header, or a chunk header is damaged or runs past the end of the file.
  public init(path: String) throws(TraceError) {
    let file = try TraceFile(path: path)
    self.file = file
    self.path = path
    self.fileSize = file.size
    let headerSize: Int
    (header, headerSize) = try Self.readFileHeader(file)
    let index = try Self.indexChunks(file, from: UInt64(headerSize))
    chunks = index.chunks
    trailer = index.trailer
    trailerChunk = index.trailerChunk
  }

  /// Whether the trace ends with a trailer. A trace without one was cut short (the process was
  /// killed, or is still running) and is read up to its last complete chunk.
  public var isComplete: Bool { trailer != nil }

  /// Offset of the last complete events chunk, or `nil` when there is none.
  public var lastCompleteChunkOffset: UInt64? { chunks.last?.offset }

  /// A one-line warning for traces without a trailer, `nil` for complete ones.
  public var incompletenessWarning: String? {
    guard !isComplete else { return nil }
    let cause = "the process was killed or is still running"
    guard let last = lastCompleteChunkOffset else {
      return "trace '\(path)' has no trailer and no complete chunk (\(cause))"
    }
    return "trace '\(path)' has no trailer (\(cause)); read up to its last complete chunk"
      + " at offset \(last)"
  }

  /// Nanoseconds from the start time to the end of recording, from the trailer; for a trace cut
  /// short, the base time of its latest chunk (a lower bound).
  public var endTimeLowerBound: UInt64 {
    trailer?.endTime ?? chunks.map(\.baseTime).max() ?? 0
  }

  /// A stream of the trace's timed events in time order, across all threads.
  public func events() -> TraceEventStream {
    TraceEventStream(reader: self)
  }
}
