import HeaplineTrace

/// What one allocating call stack did: its share of the peak, what it still holds, what it
/// allocated in all.
public struct StackStatistics: Hashable, Sendable {
  /// The stack's id in the trace.
  public var id: StackID
  /// Its return addresses, innermost first.
  public var frames: [UInt64]
  /// Bytes it held at the moment of the global peak: its peak contribution.
  public var bytesAtPeak: UInt64
  /// Bytes it holds at the end.
  public var liveBytes: UInt64
  /// Blocks it holds at the end.
  public var liveBlocks: UInt64
  /// Allocations it made.
  public var allocationCount: UInt64
  /// Bytes it allocated in all.
  public var totalBytes: UInt64
  /// Temporary allocations it made: blocks freed with no other allocation or free between
  /// their allocation and their free (heaptrack's definition).
  public var temporaryCount: UInt64
  /// The category of its blocks when the statistics count a stack's categories apart
  /// (``StatisticsOptions/splitsStacksByCategory``); otherwise `nil`.
  public var category: CategoryID?

  /// Creates a stack's figures.
  public init(
    id: StackID, frames: [UInt64], bytesAtPeak: UInt64, liveBytes: UInt64, liveBlocks: UInt64,
    allocationCount: UInt64, totalBytes: UInt64, temporaryCount: UInt64 = 0,
    category: CategoryID? = nil
  ) {
    self.id = id
    self.frames = frames
    self.bytesAtPeak = bytesAtPeak
    self.liveBytes = liveBytes
    self.liveBlocks = liveBlocks
    self.allocationCount = allocationCount
    self.totalBytes = totalBytes
    self.temporaryCount = temporaryCount
    self.category = category
  }
}
