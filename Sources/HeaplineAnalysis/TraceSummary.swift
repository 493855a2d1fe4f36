import HeaplineTrace

/// Which trace the statistics come from, and how much of it they cover.
public struct TraceSummary: Hashable, Sendable {
  /// The trace file's path.
  public var path: String
  /// Process id of the traced process.
  public var pid: UInt32
  /// Whether the trace was recorded in process, through `Heapline.record`.
  public var isRecordedInProcess: Bool
  /// Start of recording, in nanoseconds since the Unix epoch.
  public var startRealtimeNanoseconds: UInt64
  /// Nanoseconds covered: to the trailer's end time, or to the last event of a trace cut
  /// short, or to ``endTime`` when the statistics stop early.
  public var durationNanoseconds: UInt64
  /// Whether the trace ends with a trailer.
  public var isComplete: Bool
  /// Offset of the last complete events chunk; the reader stops there in a trace cut short.
  public var lastCompleteChunkOffset: UInt64?
  /// The time limit the statistics were computed up to, if any.
  public var endTime: UInt64?
  /// Why recording ended, from the trailer.
  public var endReason: TraceTrailer.EndReason?
  /// The trailer, when the trace has one: exit status, recovered chunks.
  public var trailer: TraceTrailer?
  /// The partial chunk at the end of a trace cut short, which was not read.
  public var cutShort: CutShort?
  /// Allocations and frees that happened but are not in the trace.
  public var lostEvents = LostEvents(total: 0, byReason: [:])

  /// Creates a summary.
  public init(
    path: String, pid: UInt32, isRecordedInProcess: Bool, startRealtimeNanoseconds: UInt64,
    durationNanoseconds: UInt64, isComplete: Bool, lastCompleteChunkOffset: UInt64?,
    endTime: UInt64?, endReason: TraceTrailer.EndReason?
  ) {
    self.path = path
    self.pid = pid
    self.isRecordedInProcess = isRecordedInProcess
    self.startRealtimeNanoseconds = startRealtimeNanoseconds
    self.durationNanoseconds = durationNanoseconds
    self.isComplete = isComplete
    self.lastCompleteChunkOffset = lastCompleteChunkOffset
    self.endTime = endTime
    self.endReason = endReason
  }
}

extension TraceSummary {
  /// The process's exit status from the trailer, `nil` when it is not known.
  public var exitStatus: UInt64? {
    guard let status = trailer?.exitStatus, status != TraceTrailer.unknownStatus else {
      return nil
    }
    return UInt64(status)
  }
}
