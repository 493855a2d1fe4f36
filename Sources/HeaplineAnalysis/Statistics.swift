import HeaplineTrace

/// What a trace says about allocations: totals, Object Alloc's per-category columns, and the
/// call stacks that held the most memory at the peak.
///
/// Computed in one time-ordered pass over the trace whose memory grows with the live blocks and
/// the distinct stacks, never with the number of events.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace")
/// stats.totals.peakLiveBytes                                // 4800
/// stats.category(named: "Malloc 48 Bytes")?.persistentCount // 100
/// stats.topStacks.first?.bytesAtPeak
/// ```
public struct Statistics: Sendable {
  /// Which trace, which process, how long, and whether the trace is complete.
  public var trace: TraceSummary
  /// Counts and bytes over the whole trace (or up to ``StatisticsOptions/endTime``).
  public var totals: AllocationTotals
  /// Every category that had an allocation, by persistent bytes then total bytes, largest
  /// first.
  public var categories: [CategoryStatistics]
  /// The stacks that held the most live bytes at the moment of the peak, largest first, at
  /// most ``StatisticsOptions/topStackCount``.
  public var topStacks: [StackStatistics]
  /// The number of distinct allocating stacks in the trace.
  public var stackCount: Int
  /// The trace's module map, for symbolizing ``topStacks``.
  public var modules: [TraceModule]
  /// Memory outside malloc that the program reported: totals, categories, stacks.
  public var backingStores = BackingStoreStatistics()
  /// RSS reconciled with malloc and the backing stores, at the end.
  public var footprint = FootprintBreakdown(
    time: 0, isMeasured: false, residentBytes: nil, mallocLiveBytes: 0, mallocLiveBlocks: 0,
    mallocOverheadBytes: nil, backingStoreBytes: 0, allocatorFreeBytes: nil)
  /// RSS at its largest sample, beside malloc's live bytes and the backing stores then; `nil`
  /// without RSS samples.
  public var footprintAtPeakRSS: FootprintBreakdown?
  /// Every memory warning, in time order, with what each observer freed.
  public var memoryWarnings: [MemoryWarningStatistics] = []
  /// The memory-limit kill that ended the recording, if one did.
  public var memoryLimitKill: MemoryLimitKill?
  /// Set when the trace was recorded with `--sample-bytes`: then ``categories`` and
  /// ``topStacks`` are estimates, scaled up from the sampled allocations, while ``totals`` are
  /// exact (their live bytes are usable bytes, as `malloc_usable_size` gives them).
  public var sampleWeight: SampleWeight?

  /// Creates statistics from their parts.
  public init(
    trace: TraceSummary, totals: AllocationTotals, categories: [CategoryStatistics],
    topStacks: [StackStatistics], stackCount: Int, modules: [TraceModule]
  ) {
    self.trace = trace
    self.totals = totals
    self.categories = categories
    self.topStacks = topStacks
    self.stackCount = stackCount
    self.modules = modules
  }

  /// The category with this display name, `Malloc 48 Bytes` or a Swift type name.
  public func category(named name: String) -> CategoryStatistics? {
    categories.first { $0.name == name }
  }

  /// The category with this id.
  public func category(_ id: CategoryID) -> CategoryStatistics? {
    categories.first { $0.id == id }
  }

  /// The top stack with this id, if it ranks among ``topStacks``.
  public func stack(_ id: StackID) -> StackStatistics? {
    topStacks.first { $0.id == id }
  }
}
