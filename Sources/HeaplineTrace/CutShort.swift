/// The partial chunk at the end of a trace that was cut short: the process was killed while a
/// chunk was being written, the disk filled, or the trace is still being written.
///
/// ``TraceReader`` reads every complete chunk before it and leaves these bytes out.
public struct CutShort: Hashable, Sendable {
  /// Offset of the partial chunk.
  public var offset: UInt64
  /// The bytes from there to the end of the file, none of which were read.
  public var bytes: UInt64

  /// Describes a partial chunk of `bytes` bytes at `offset`.
  public init(offset: UInt64, bytes: UInt64) {
    self.offset = offset
    self.bytes = bytes
  }
}
