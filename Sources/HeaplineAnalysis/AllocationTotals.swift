/// Counts and bytes over the whole trace, with the peak of live bytes.
///
/// "Live" means allocated and not yet freed. "At end" means at the end of the trace, or at the
/// time limit when the statistics stop early.
public struct AllocationTotals: Hashable, Sendable {
  /// ALLOC events.
  public var allocationCount: UInt64 = 0
  /// FREE events that matched an allocation of the trace.
  public var freeCount: UInt64 = 0
  /// FREE events that name no allocation the trace holds before them (a chunk of it was lost,
  /// or was written out of order); ignored. The frees of blocks allocated before recording
  /// began are not recorded at all.
  public var unmatchedFreeCount: UInt64 = 0
  /// Sum of the sizes of all allocations.
  public var allocatedBytes: UInt64 = 0
  /// Blocks live when the file began, carried over from the file before by a rotated
  /// recording (`heapline record --rotate`): counted live, never as allocations.
  public var carriedOverBlocks: UInt64 = 0
  /// Their bytes.
  public var carriedOverBytes: UInt64 = 0
  /// Sum of the sizes of all freed blocks.
  public var freedBytes: UInt64 = 0
  /// The most bytes live at any moment.
  public var peakLiveBytes: UInt64 = 0
  /// Blocks live at that moment.
  public var peakLiveBlocks: UInt64 = 0
  /// Nanoseconds since the start when live bytes first reached the peak; `nil` without one.
  public var peakTime: UInt64?
  /// Bytes live at the end.
  public var liveBytes: UInt64 = 0
  /// Blocks live at the end.
  public var liveBlocks: UInt64 = 0
  /// Marks (generation boundaries and memory warnings) read.
  public var markCount: UInt64 = 0
  /// RSS samples read.
  public var rssSampleCount: UInt64 = 0
  /// The largest RSS the process had, in bytes: the largest sample, or the kernel's high-water
  /// mark when it rose between two samples.
  public var peakRSSBytes: UInt64?
  /// The last RSS sample, in bytes.
  public var lastRSSBytes: UInt64?

  /// Zero totals.
  public init() {}
}
