/// One row of a timeline: the state at the end of one time step, and what happened in it.
///
/// A row covers the nanoseconds after the previous row's ``endTime`` up to and including its
/// own, so its figures are those that `heapline report --at` gives for ``endTime``. The one
/// exception is the row inserted at the peak (``isPeak``), described in <doc:TimelineCSV>.
public struct TimelineRow: Hashable, Sendable {
  /// The end of the step, in nanoseconds since the trace's start.
  public var endTime: UInt64
  /// Bytes live at the end of the step.
  public var liveBytes: UInt64 = 0
  /// Blocks live at the end of the step.
  public var liveBlocks: UInt64 = 0
  /// Allocations made in the step.
  public var allocationCount: UInt64 = 0
  /// Frees of blocks allocated in the trace, made in the step.
  public var freeCount: UInt64 = 0
  /// The most bytes live at any instant of the step, its start included.
  public var peakLiveBytes: UInt64 = 0
  /// Bytes in backing stores (memory outside malloc, reported through
  /// `Heapline.backingStore`) at the end of the step; 0 in traces without them.
  public var backingStoreBytes: UInt64 = 0
  /// Bytes in backing stores at the end of the step, one per entry of
  /// ``TimelineScan/backingStoreColumns``.
  public var categoryBackingStoreBytes: [UInt64] = []
  /// The last RSS sample taken at or before the end of the step; `nil` before the first.
  public var rssBytes: UInt64?
  /// Live bytes at the end of the step, one per entry of ``TimelineScan/categoryColumns``.
  public var categoryLiveBytes: [UInt64] = []
  /// Names of the marks made in the step, in order; memory warnings read
  /// `memory warning: LEVEL`.
  public var marks: [String] = []
  /// Whether this is the extra row that ends just after the allocation that first reached the
  /// peak of live bytes.
  public var isPeak = false

  /// An empty row ending at `endTime`.
  public init(endTime: UInt64) {
    self.endTime = endTime
  }
}
