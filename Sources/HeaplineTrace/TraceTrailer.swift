/// The payload of the trailer chunk that a cleanly finished trace ends with.
public struct TraceTrailer: Hashable, Sendable {
  /// Why recording ended.
  public struct EndReason: RawRepresentable, Hashable, Sendable {
    /// The reason code as written.
    public var rawValue: UInt32
    /// Wraps a reason code.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The process exited.
    public static let exited = EndReason(rawValue: 0)
    /// Recording was stopped through the API.
    public static let stopped = EndReason(rawValue: 1)
    /// A write to the trace failed, so events after it are missing.
    public static let writeFailed = EndReason(rawValue: 2)
    /// The footprint crossed `heapline record --memory-limit`: the shim ended the recording
    /// and killed the process with SIGKILL.
    public static let memoryLimit = EndReason(rawValue: 3)
  }

  /// Nanoseconds from the start time to the end of recording.
  public var endTime: UInt64
  /// Number of event chunks the shim wrote.
  public var eventChunkCount: UInt64
  /// Number of ALLOC records the shim wrote.
  public var allocCount: UInt64
  /// Number of FREE records the shim wrote.
  public var freeCount: UInt64
  /// Why recording ended.
  public var endReason: EndReason

  /// Creates a trailer.
  public init(
    endTime: UInt64, eventChunkCount: UInt64, allocCount: UInt64, freeCount: UInt64,
    endReason: EndReason = .exited
  ) {
    self.endTime = endTime
    self.eventChunkCount = eventChunkCount
    self.allocCount = allocCount
    self.freeCount = freeCount
    self.endReason = endReason
  }

  /// The trailer's 40 payload bytes.
  public var encoded: [UInt8] {
    var writer = ByteWriter()
    writer.appendUInt64(endTime)
    writer.appendUInt64(eventChunkCount)
    writer.appendUInt64(allocCount)
    writer.appendUInt64(freeCount)
    writer.appendUInt32(endReason.rawValue)
    writer.appendUInt32(0)
    return writer.bytes
  }
}

extension TraceTrailer {
  /// Decodes a trailer payload of at least 40 bytes.
  init(payload: [UInt8]) throws(ByteCursor.Failure) {
    var cursor = ByteCursor(payload)
    endTime = try cursor.readUInt64()
    eventChunkCount = try cursor.readUInt64()
    allocCount = try cursor.readUInt64()
    freeCount = try cursor.readUInt64()
    endReason = EndReason(rawValue: try cursor.readUInt32())
  }
}
