import Glibc

/// Writes trace files in the format ``TraceReader`` reads, from Swift.
///
/// Tests use it to build traces with exactly known content, and damaged ones: ``bytes`` is the
/// whole file, which a test may change before writing it.
///
/// ```swift
/// var writer = TraceWriter()
/// var chunk = writer.makeChunk(threadSerial: 1)
/// chunk.alloc(at: 0, size: 48, address: 0x1000)
/// try writer.append(chunk)
/// writer.appendTrailer(endTime: 1_000)
/// try writer.write(to: "/tmp/t.trace")
/// ```
public struct TraceWriter: Sendable {
  /// The file header written first.
  public let header: TraceHeader
  /// The file so far, less what ``takeBytes()`` handed out.
  public var bytes: [UInt8]
  /// Bytes handed out by ``takeBytes()``: offsets in the file count them.
  public private(set) var takenByteCount: UInt64 = 0
  /// Headers of the chunks appended so far, with their offsets.
  public private(set) var chunks: [ChunkHeader] = []
  private var nextAllocCounter: [UInt32: UInt64] = [:]
  /// A chunk without timed records takes its thread's previous base time, as the shim does.
  private var lastBaseTime: [UInt32: UInt64] = [:]
  /// ALLOC records appended so far, for the trailer.
  public private(set) var allocCount: UInt64 = 0
  /// FREE records appended so far, for the trailer.
  public private(set) var freeCount: UInt64 = 0

  /// Starts a file with `header`.
  public init(header: TraceHeader = TraceHeader()) {
    self.header = header
    self.bytes = header.encoded
  }

  /// An empty chunk for `threadSerial` whose alloc counter continues from that thread's
  /// previous chunks in this writer.
  public func makeChunk(threadSerial: UInt32) -> ChunkBuilder {
    ChunkBuilder(
      threadSerial: threadSerial, firstAllocCounter: nextAllocCounter[threadSerial] ?? 0)
  }

  /// Appends `chunk`, raw or as one zstd frame; returns its header. Like the shim, it flags a
  /// chunk without stacks or modules (``ChunkFlags/noStacksOrModules``) and one with a side
  /// section.
  @discardableResult
  public mutating func append(_ chunk: ChunkBuilder, encoding: PayloadEncoding = .raw)
    -> ChunkHeader
  {
    let raw = chunk.payloadBytes
    let stored = encoding == .zstd ? Zstd.compress(raw) : raw
    var header = ChunkHeader(
      offset: takenByteCount + UInt64(bytes.count), kind: .events, encoding: encoding,
      threadSerial: chunk.threadSerial, threadID: chunk.threadID,
      storedLength: UInt32(stored.count), rawLength: UInt32(raw.count),
      baseTime: chunk.baseTime ?? lastBaseTime[chunk.threadSerial] ?? 0,
      firstAllocCounter: chunk.firstAllocCounter, recordCount: chunk.recordCount, checksum: 0,
      flags: chunk.flags)
    header.seal(over: stored)
    bytes += header.encoded
    bytes += stored
    chunks.append(header)
    let counter = chunk.firstAllocCounter + chunk.allocCount
    nextAllocCounter[chunk.threadSerial] = max(nextAllocCounter[chunk.threadSerial] ?? 0, counter)
    lastBaseTime[chunk.threadSerial] = header.baseTime
    allocCount += chunk.allocCount
    freeCount += chunk.freeCount
    return header
  }

  /// Appends the trailer, with the counts of what was appended before it.
  public mutating func appendTrailer(
    endTime: UInt64, endReason: TraceTrailer.EndReason = .exited, lostEvents: UInt64 = 0
  ) {
    appendTrailer(
      TraceTrailer(
        endTime: endTime, eventChunkCount: UInt64(chunks.count), allocCount: allocCount,
        freeCount: freeCount, endReason: endReason, lostEvents: lostEvents))
  }

  /// Appends `trailer` as it is: for trailers with an exit status or recovered chunks, and for
  /// trailers whose counts are wrong on purpose.
  public mutating func appendTrailer(_ trailer: TraceTrailer) {
    let payload = trailer.encoded
    var header = ChunkHeader(
      offset: takenByteCount + UInt64(bytes.count), kind: .trailer, encoding: .raw, threadSerial: 0,
      threadID: 0,
      storedLength: UInt32(payload.count), rawLength: UInt32(payload.count),
      baseTime: trailer.endTime, firstAllocCounter: 0, recordCount: 0, checksum: 0)
    header.seal(over: payload)
    bytes += header.encoded
    bytes += payload
  }

  /// Returns the file's bytes written since the last call and forgets them, so that a trace
  /// larger than memory can be streamed to disk chunk by chunk.
  ///
  /// ```swift
  /// try output.write(contentsOf: writer.takeBytes())
  /// ```
  public mutating func takeBytes() -> [UInt8] {
    let taken = bytes
    takenByteCount += UInt64(bytes.count)
    bytes = []
    return taken
  }

  /// Writes `header` at its offset in ``bytes``, sealed over the payload bytes that follow it
  /// there: for tests that change a chunk and need its checksum to stay right.
  public mutating func reseal(_ header: ChunkHeader) {
    var header = header
    precondition(takenByteCount == 0, "reseal needs the whole file in bytes")
    let start = Int(header.payloadOffset)
    header.seal(over: bytes[start..<min(bytes.count, start + Int(header.storedLength))])
    bytes.replaceSubrange(Int(header.offset)..<start, with: header.encoded)
  }

  /// Writes ``bytes`` to `path`, replacing any file there.
  public func write(to path: String) throws(TraceError) {
    let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw TraceError(path: path, reason: .cannotOpen(String(cString: strerror(errno))))
    }
    defer { close(descriptor) }
    var done = 0
    while done < bytes.count {
      let result = bytes.withUnsafeBytes { buffer in
        Glibc.write(descriptor, buffer.baseAddress! + done, buffer.count - done)
      }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        let message = String(cString: strerror(errno))
        throw TraceError(path: path, reason: .writeFailed(offset: UInt64(done), message))
      }
      done += result
    }
  }
}
