/// The 48-byte file header: who was traced, and when recording started.
public struct TraceHeader: Hashable, Sendable {
  /// The format version the file was written with.
  public var version: UInt16
  /// Process id of the traced process.
  public var pid: UInt32
  /// Start time on `CLOCK_MONOTONIC`, in nanoseconds. Event times count from here.
  public var startMonotonicNanoseconds: UInt64
  /// Start time on `CLOCK_REALTIME`, in nanoseconds since the Unix epoch.
  public var startRealtimeNanoseconds: UInt64
  /// The deepest stack the shim records, in frames.
  public var maximumStackDepth: UInt32
  /// Flag bits; see ``isRecordedInProcess``.
  public var flags: UInt32
  /// Page size of the traced process.
  public var pageSize: UInt32

  /// Creates a header; the defaults suit tests.
  public init(
    version: UInt16 = TraceConstants.version, pid: UInt32 = 1,
    startMonotonicNanoseconds: UInt64 = 0,
    startRealtimeNanoseconds: UInt64 = 0, maximumStackDepth: UInt32 = 64, flags: UInt32 = 0,
    pageSize: UInt32 = 4096
  ) {
    self.version = version
    self.pid = pid
    self.startMonotonicNanoseconds = startMonotonicNanoseconds
    self.startRealtimeNanoseconds = startRealtimeNanoseconds
    self.maximumStackDepth = maximumStackDepth
    self.flags = flags
    self.pageSize = pageSize
  }

  /// Whether the trace was recorded in process, through `Heapline.record`.
  public var isRecordedInProcess: Bool { flags & TraceConstants.recordedInProcessFlag != 0 }

  /// The header's 48 bytes, the last four the FNV-1a of the 44 before them.
  public var encoded: [UInt8] {
    var writer = ByteWriter()
    writer.append(TraceConstants.fileMagic)
    writer.appendUInt16(version)
    writer.appendUInt16(UInt16(TraceConstants.fileHeaderSize))
    writer.appendUInt32(pid)
    writer.appendUInt64(startMonotonicNanoseconds)
    writer.appendUInt64(startRealtimeNanoseconds)
    writer.appendUInt32(maximumStackDepth)
    writer.appendUInt32(flags)
    writer.appendUInt32(pageSize)
    writer.appendUInt32(FNV1a.hash(writer.bytes))
    return writer.bytes
  }
}

extension TraceHeader {
  /// Reads the fields after magic, version and header size, which the reader has checked.
  init(fields cursor: inout ByteCursor, version: UInt16) throws(ByteCursor.Failure) {
    self.version = version
    pid = try cursor.readUInt32()
    startMonotonicNanoseconds = try cursor.readUInt64()
    startRealtimeNanoseconds = try cursor.readUInt64()
    maximumStackDepth = try cursor.readUInt32()
    flags = try cursor.readUInt32()
    pageSize = try cursor.readUInt32()
  }
}
