/// The 48-byte header of a chunk, with the chunk's place in the file.
///
/// ``TraceReader`` indexes a file by reading only these, so it knows every chunk's thread, time
/// and length before it reads any payload.
public struct ChunkHeader: Hashable, Sendable {
  /// Byte offset of the chunk header in the file.
  public var offset: UInt64
  /// Events or trailer.
  public var kind: ChunkKind
  /// How the payload is stored.
  public var encoding: PayloadEncoding
  /// What the header says of the payload's records.
  public var flags: ChunkFlags
  /// Serial of the writing thread: 1, 2, 3…; 0 for the shim's own thread.
  public var threadSerial: UInt32
  /// Kernel thread id of the writing thread.
  public var threadID: UInt32
  /// Length of the payload as stored after this header.
  public var storedLength: UInt32
  /// Length of the payload after decompression.
  public var rawLength: UInt32
  /// Nanoseconds since the start time of the chunk's first timed record.
  public var baseTime: UInt64
  /// Alloc counter of the chunk's first ALLOC record.
  public var firstAllocCounter: UInt64
  /// Number of records in the payload.
  public var recordCount: UInt32
  /// FNV-1a 32 of the header's first 44 bytes followed by the stored payload; see
  /// ``seal(over:)``.
  public var checksum: UInt32

  /// Creates a chunk header.
  public init(
    offset: UInt64, kind: ChunkKind, encoding: PayloadEncoding, threadSerial: UInt32,
    threadID: UInt32, storedLength: UInt32, rawLength: UInt32, baseTime: UInt64,
    firstAllocCounter: UInt64, recordCount: UInt32, checksum: UInt32, flags: ChunkFlags = []
  ) {
    self.offset = offset
    self.kind = kind
    self.encoding = encoding
    self.flags = flags
    self.threadSerial = threadSerial
    self.threadID = threadID
    self.storedLength = storedLength
    self.rawLength = rawLength
    self.baseTime = baseTime
    self.firstAllocCounter = firstAllocCounter
    self.recordCount = recordCount
    self.checksum = checksum
  }

  /// Offset of the payload's first byte in the file.
  public var payloadOffset: UInt64 { offset &+ UInt64(TraceConstants.chunkHeaderSize) }

  /// Offset just past the chunk: where the next chunk starts.
  public var endOffset: UInt64 { payloadOffset &+ UInt64(storedLength) }

  /// The header's 48 bytes.
  public var encoded: [UInt8] {
    var writer = ByteWriter()
    writer.appendUInt32(TraceConstants.chunkMagic)
    writer.appendUInt8(kind.rawValue)
    writer.appendUInt8(encoding.rawValue)
    writer.appendUInt16(flags.rawValue)
    writer.appendUInt32(threadSerial)
    writer.appendUInt32(threadID)
    writer.appendUInt32(storedLength)
    writer.appendUInt32(rawLength)
    writer.appendUInt64(baseTime)
    writer.appendUInt64(firstAllocCounter)
    writer.appendUInt32(recordCount)
    writer.appendUInt32(checksum)
    return writer.bytes
  }

  /// The checksum this header, with its current fields, has over `storedPayload`: FNV-1a of
  /// the header's first 44 bytes followed by the payload, so that a change anywhere in the
  /// chunk (a length, a base time, a payload byte) is caught.
  public func checksum<Payload: Sequence<UInt8>>(over storedPayload: Payload) -> UInt32 {
    let headerBytes = encoded.prefix(TraceConstants.checksumOffset)
    return FNV1a.hash(storedPayload, continuing: FNV1a.hash(headerBytes))
  }

  /// Sets ``checksum`` for `storedPayload`, the bytes that follow the header in the file: the
  /// one way to finish a chunk header, for every Swift writer of chunks.
  ///
  /// ```swift
  /// var header = ChunkHeader(offset: end, kind: .events, encoding: .raw, threadSerial: 1,
  ///   threadID: 42, storedLength: UInt32(payload.count), rawLength: UInt32(payload.count),
  ///   baseTime: 0, firstAllocCounter: 0, recordCount: 1, checksum: 0)
  /// header.seal(over: payload)
  /// file += header.encoded + payload
  /// ```
  public mutating func seal<Payload: Sequence<UInt8>>(over storedPayload: Payload) {
    checksum = checksum(over: storedPayload)
  }
}
