import HeaplineTrace

/// The state of the single statistics pass: the live blocks, a counter per stack and per
/// category, and the running totals.
struct StatisticsAccumulator {
  /// What the pass must remember of a live block to undo its allocation when it is freed.
  private struct LiveBlock {
    var size: UInt64
    var stack: StackID
    var category: CategoryID
  }

  private var live: [AllocID: LiveBlock] = [:]
  private(set) var stacks: [StackID: UsageCounter] = [:]
  private(set) var categories: [CategoryID: UsageCounter] = [:]
  private(set) var totals = AllocationTotals()
  /// Incremented each time live bytes reach a new peak; see ``UsageCounter``.
  private(set) var peakEpoch: UInt64 = 0
  private(set) var lastEventTime: UInt64 = 0

  mutating func apply(_ event: TraceEvent) {
    lastEventTime = max(lastEventTime, event.time)
    switch event {
    case .alloc(let alloc): allocate(alloc)
    case .free(let free): release(free)
    case .rss(let sample): sampleRSS(sample)
    }
  }

  private mutating func allocate(_ alloc: AllocationEvent) {
    let block = LiveBlock(size: alloc.size, stack: alloc.stack, category: alloc.category)
    // An id that is still live means a damaged or duplicated record: retire the old block so
    // the live figures stay consistent.
    if let previous = live.updateValue(block, forKey: alloc.id) { retire(previous) }
    stacks[alloc.stack, default: UsageCounter()].allocate(alloc.size, epoch: peakEpoch)
    categories[alloc.category, default: UsageCounter()].allocate(alloc.size, epoch: peakEpoch)
    totals.allocationCount &+= 1
    totals.allocatedBytes &+= alloc.size
    totals.liveBytes &+= alloc.size
    totals.liveBlocks &+= 1
    if totals.liveBytes > totals.peakLiveBytes {
      totals.peakLiveBytes = totals.liveBytes
      totals.peakLiveBlocks = totals.liveBlocks
      totals.peakTime = alloc.time
      peakEpoch &+= 1
    }
  }

  private mutating func release(_ free: FreeEvent) {
    guard let block = live.removeValue(forKey: free.id) else {
      // Allocated before recording began (or in a chunk lost to a crash): nothing to undo.
      totals.unmatchedFreeCount &+= 1
      return
    }
    retire(block)
    totals.freeCount &+= 1
    totals.freedBytes &+= block.size
  }

  private mutating func retire(_ block: LiveBlock) {
    stacks[block.stack, default: UsageCounter()].release(block.size, epoch: peakEpoch)
    categories[block.category, default: UsageCounter()].release(block.size, epoch: peakEpoch)
    totals.liveBytes &-= block.size
    totals.liveBlocks &-= 1
  }

  private mutating func sampleRSS(_ sample: RSSSample) {
    totals.rssSampleCount &+= 1
    totals.peakRSSBytes = max(totals.peakRSSBytes ?? 0, sample.residentBytes)
    totals.lastRSSBytes = sample.residentBytes
  }
}
