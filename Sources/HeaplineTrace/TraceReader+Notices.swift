/// Allocations and frees that happened while recording but are not in the trace.
public struct LostEvents: Hashable, Sendable {
  /// All lost events: the trailer's count when the trace has a trailer, else the sum of the
  /// LOST records read.
  public var total: UInt64
  /// The LOST records' counts, by reason.
  public var byReason: [LostReason: UInt64]

  /// Lost-event counts.
  public init(total: UInt64, byReason: [LostReason: UInt64]) {
    self.total = total
    self.byReason = byReason
  }

  /// The counts of a trace: `trailer` and the LOST records gathered in `metadata`.
  public init(trailer: TraceTrailer?, metadata: TraceMetadata) {
    byReason = metadata.lostEvents
    total = trailer?.lostEvents ?? byReason.values.reduce(0, &+)
  }

  /// The reasons with their counts, largest first, as `count reason` phrases.
  public var reasonPhrases: [String] {
    byReason.sorted { ($0.value, $1.key.rawValue) > ($1.value, $0.key.rawValue) }
      .map { "\($0.value) \($0.key)" }
  }

  /// One line for reports: `1,204 allocations and frees were not recorded (1,204 signal
  /// handlers interrupting the shim)`.
  public var sentence: String {
    let reasons = reasonPhrases.isEmpty ? "" : " (" + reasonPhrases.joined(separator: ", ") + ")"
    return "\(total) allocations and frees were not recorded\(reasons): the figures are not exact"
  }
}

extension TraceReader {
  /// The lost events of the trace, without reading every chunk: the shim's own thread (serial
  /// 0) writes the LOST records, so only its chunks are decoded.
  public func lostEvents() throws(TraceError) -> LostEvents {
    // That thread also writes the scans made on a timer or a signal: read, not kept (hundreds
    // of scans of a program's every live block took `leaks` 3.4 GB here).
    var metadata = TraceMetadata()
    metadata.keepsLeakBlocks = false
    for chunk in chunks where chunk.threadSerial == 0 {
      var decoder = try cursor(for: chunk)
      while try decoder.nextEvent(metadata: &metadata) != nil {}
    }
    return LostEvents(trailer: trailer, metadata: metadata)
  }

  /// Nanoseconds from the start time to the end of recording: the trailer's end time, or for
  /// a trace without one (a recording killed, or still going), its latest event. Every chunk
  /// is decoded, in order: a thread's last chunk names the allocation infos its earlier ones
  /// defined, and decoded alone it read as corrupt.
  public func endTime() throws(TraceError) -> UInt64 {
    if let trailer { return trailer.endTime }
    var end: UInt64 = 0
    var metadata = TraceMetadata()
    metadata.keepsLeakBlocks = false
    for chunk in chunks {
      end = max(end, chunk.baseTime)
      var decoder = try cursor(for: chunk)
      while try decoder.nextEvent(metadata: &metadata) != nil {}
      end = max(end, decoder.time)
    }
    return end
  }

  /// The one-line notices every command that reads the trace prints before its output: a
  /// trace cut short or without a trailer, a recording stopped by a failed write, events that
  /// were not recorded, and a process that ended before the shim could finish.
  public func notices() throws(TraceError) -> [String] {
    var notices: [String] = []
    if let warning = incompletenessWarning { notices.append(warning) }
    if trailer?.endReason == .writeFailed {
      notices.append(
        "trace '\(path)' is cut short: writing it failed, so what the program did after that is"
          + " missing")
    }
    let lost = try lostEvents()
    if lost.total > 0 { notices.append("trace '\(path)': " + lost.sentence) }
    if trailer?.flags.contains(.buffersLost) == true {
      notices.append(Self.buffersLostNotice(path))
    }
    if let ending = trailer?.unfinishedEnding {
      notices.append("trace '\(path)': " + ending)
    }
    return notices
  }
}

extension TraceReader {
  /// The notice of a trace whose trailer has ``TraceTrailer/Flags/buffersLost``.
  public static func buffersLostNotice(_ path: String) -> String {
    "trace '\(path)' is missing events, uncounted: some of the shim's buffers were in the "
      + "program's own memory (the memory shared with heapline record could not grow: a file "
      + "size limit, a full /dev/shm), and the program ended before the shim could write them"
  }
}

extension TraceTrailer {
  /// For end reason 4, what happened, with the recovered chunks and the exit status; `nil`
  /// for other endings.
  public var unfinishedEnding: String? {
    guard endReason == .endedUnfinished else { return nil }
    let status = exitStatus == Self.unknownStatus ? "unknown" : String(exitStatus)
    return "the process ended before the shim could finish: heapline record recovered"
      + " \(recoveredChunkCount) chunks; exit status \(status)"
  }
}
