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
    /// The process ended before the shim could finish the trace (`_exit`, `abort`, a crash, a
    /// kill): `heapline record` wrote what the shim's buffers still held, then this trailer.
    public static let endedUnfinished = EndReason(rawValue: 4)
    /// The process ran `exec`: this trace is the program before it, moved aside as `PATH.N`;
    /// the next program's trace follows at the path asked for.
    public static let exec = EndReason(rawValue: 5)
    /// A rotated recording (`heapline record --rotate`) went on in its next file, whose
    /// sequence number is one more.
    public static let rotated = EndReason(rawValue: 6)
    /// The program installed a seccomp filter that would have killed it for the shim's own
    /// system calls: the recording ended just before the filter took effect.
    public static let seccomp = EndReason(rawValue: 7)
  }

  /// Flags of the trailer (offset 48).
  public struct Flags: OptionSet, Hashable, Sendable {
    /// The options' bits.
    public var rawValue: UInt32
    /// Wraps flag bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// `heapline record` wrote this trailer after the process ended, and the buffers it
    /// recovered from shared memory.
    public static let writtenByRecorder = Flags(rawValue: 1 << 0)
    /// The program closed the shim's trace descriptor; the shim reopened the trace and went on.
    public static let descriptorReopened = Flags(rawValue: 1 << 1)
    /// The shim had no room for a category (32,768 in all, 4,096 of them named) or for a Swift
    /// type (32,768): objects of the classes first seen after that, and blocks of scopes or
    /// backing stores first named after it, count in their size classes.
    public static let categoriesFull = Flags(rawValue: 1 << 2)
    /// Some of the shim's buffers were in the program's own memory, not in the memory that
    /// `heapline record` shares with it (that could not grow: a file size limit, a full
    /// `/dev/shm`), and the program ended before the shim could write them: what they held
    /// since their last write is missing, uncounted. Set only in a trailer that the recorder
    /// wrote.
    public static let buffersLost = Flags(rawValue: 1 << 3)
  }

  /// The exit status that stands for "not known".
  public static let unknownStatus: UInt32 = 0xFFFF_FFFF

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
  /// The process's exit status as a shell shows it (its exit code, or 128 + N for signal N),
  /// or ``unknownStatus``.
  public var exitStatus: UInt32
  /// Allocations and frees that happened while recording but could not be recorded; their
  /// reasons are in the trace's LOST records.
  public var lostEvents: UInt64
  /// How the trace was finished.
  public var flags: Flags
  /// Event chunks that `heapline record` recovered from the shim's shared buffers after the
  /// process ended (included in ``eventChunkCount``).
  public var recoveredChunkCount: UInt32
  /// The bytes the shim's stack table had mapped at the end (at most 64 MiB); 0 in a trailer
  /// that `heapline record` wrote, which cannot see the table.
  public var stackTableBytes: UInt32
  /// Frames the full stack table had no room for: each cut a stack short at that frame
  /// (saturates at `UInt32.max`).
  public var stackFramesCut: UInt32

  /// Creates a trailer.
  public init(
    endTime: UInt64, eventChunkCount: UInt64, allocCount: UInt64, freeCount: UInt64,
    endReason: EndReason = .exited, exitStatus: UInt32 = TraceTrailer.unknownStatus,
    lostEvents: UInt64 = 0, flags: Flags = [], recoveredChunkCount: UInt32 = 0,
    stackTableBytes: UInt32 = 0, stackFramesCut: UInt32 = 0
  ) {
    self.endTime = endTime
    self.eventChunkCount = eventChunkCount
    self.allocCount = allocCount
    self.freeCount = freeCount
    self.endReason = endReason
    self.exitStatus = exitStatus
    self.lostEvents = lostEvents
    self.flags = flags
    self.recoveredChunkCount = recoveredChunkCount
    self.stackTableBytes = stackTableBytes
    self.stackFramesCut = stackFramesCut
  }

  /// The trailer's 64 payload bytes.
  public var encoded: [UInt8] {
    var writer = ByteWriter()
    writer.appendUInt64(endTime)
    writer.appendUInt64(eventChunkCount)
    writer.appendUInt64(allocCount)
    writer.appendUInt64(freeCount)
    writer.appendUInt32(endReason.rawValue)
    writer.appendUInt32(exitStatus)
    writer.appendUInt64(lostEvents)
    writer.appendUInt32(flags.rawValue)
    writer.appendUInt32(recoveredChunkCount)
    writer.appendUInt32(stackTableBytes)
    writer.appendUInt32(stackFramesCut)
    return writer.bytes
  }
}

extension TraceTrailer {
  /// Why a trailer payload does not decode.
  enum DecodeFailure: Error {
    case truncated
  }

  /// Decodes a trailer payload of 64 bytes.
  init(payload: [UInt8]) throws(DecodeFailure) {
    do {
      try self.init(fields: payload)
    } catch {
      throw .truncated
    }
  }

  private init(fields payload: [UInt8]) throws(ByteCursor.Failure) {
    var cursor = ByteCursor(payload)
    endTime = try cursor.readUInt64()
    eventChunkCount = try cursor.readUInt64()
    allocCount = try cursor.readUInt64()
    freeCount = try cursor.readUInt64()
    endReason = EndReason(rawValue: try cursor.readUInt32())
    exitStatus = try cursor.readUInt32()
    lostEvents = try cursor.readUInt64()
    flags = Flags(rawValue: try cursor.readUInt32())
    recoveredChunkCount = try cursor.readUInt32()
    stackTableBytes = try cursor.readUInt32()
    stackFramesCut = try cursor.readUInt32()
  }
}
