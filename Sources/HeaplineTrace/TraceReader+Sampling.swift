extension TraceReader {
  /// The mean bytes between samples of a trace recorded in sampling mode
  /// (`heapline record --sample-bytes`), or `nil` for a full trace.
  ///
  /// The SAMPLING record is written at time 0, so only the first instant is read.
  ///
  /// ```swift
  /// if let bytes = try reader.sampleMeanBytes() { print("sampled every \(bytes) bytes") }
  /// ```
  public func sampleMeanBytes() throws(TraceError) -> UInt64? {
    var stream = events(leakBlocks: false)
    while let event = try stream.next(), event.time == 0 {
      if case .memory(let memory) = event, case .sampling(let bytes) = memory.detail {
        return bytes
      }
    }
    return nil
  }
}
