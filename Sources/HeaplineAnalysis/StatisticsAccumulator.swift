import HeaplineTrace

/// The state of the single statistics pass: the live blocks, a counter per stack and per
/// category, and the running totals.
///
/// Counters live in arrays, and a live block remembers the slots of its stack and category,
/// so a free costs one hash lookup (the block's) rather than three.
struct StatisticsAccumulator {
  /// What the pass must remember of a live block to undo its allocation when it is freed.
  /// The live blocks, each by its kind (size, stack and category), whose slots are these.
  private var live = LiveTable<Int32>()
  private var kinds = BlockKinds()
  private var kindStackSlots: [Int32] = []
  private var kindCategorySlots: [Int32] = []
  /// Slots of stacks, when the pass counts each stack as one.
  private var stackSlots = IDSlots<StackID>()
  /// Slots of (stack, category) pairs, when the pass counts a stack's categories apart.
  private var pairSlots: [StackCategory: Int32]?
  private(set) var stackIDs: [StackID] = []
  /// The category of each stack slot, when the pass counts a stack's categories apart.
  private(set) var stackCategories: [CategoryID] = []
  private(set) var stackCounters: [UsageCounter] = []
  /// Temporary allocations per stack slot; see ``StackStatistics/temporaryCount``.
  private(set) var stackTemporaryCounts: [UInt64] = []
  /// The last allocation while no free or allocation has followed it.
  private var lastAllocation: (id: AllocID, stackSlot: Int32)?
  private var categorySlots = IDSlots<CategoryID>()
  /// The categories, by slot.
  var categoryIDs: [CategoryID] { categorySlots.ids }
  private(set) var categoryCounters: [UsageCounter] = []
  private(set) var totals = AllocationTotals()
  /// Incremented each time live bytes reach a new peak; see ``UsageCounter``.
  private(set) var peakEpoch: UInt64 = 0
  private(set) var lastEventTime: UInt64 = 0
  /// Backing stores, memory warnings, footprints and a memory-limit kill.
  private(set) var memory = MemoryAccumulator()
  /// Set by a SAMPLING record: ALLOC and FREE then feed the stacks and categories, weighted,
  /// and the totals come from COUNTS records alone.
  private(set) var sampleWeight: SampleWeight?
  /// Live blocks and usable bytes by COUNTS records, signed: one thread's frees may be counted
  /// before another's allocations of the same blocks.
  private var countedLive: (bytes: Int64, blocks: Int64) = (0, 0)

  /// A pass that counts each stack as one (`splitsCategories` false) or each of its
  /// categories apart.
  init(splitsCategories: Bool = false) {
    if splitsCategories { pairSlots = [:] }
  }

  /// See ``LookaheadEvents``.
  mutating func prefetch(_ id: AllocID) { live.prefetch(id) }

  /// Lets go of the live blocks once the pass is over: the figures are in the counters, and
  /// the table, the pass's largest structure, would otherwise stay while the results are made.
  mutating func forgetLiveBlocks() { live = LiveTable() }

  mutating func apply(_ event: TraceEvent) {
    lastEventTime = max(lastEventTime, event.time)
    switch event {
    case .alloc(let alloc): allocate(alloc)
    case .free(let free): release(free)
    case .rss(let sample):
      sampleRSS(sample)
      memory.sampleRSS(sample, mallocLiveBytes: totals.liveBytes, blocks: totals.liveBlocks)
    case .mark: totals.markCount &+= 1
    case .backingStore(let store): memory.apply(store)
    case .memory(let event):
      switch event.detail {
      case .sampling(let meanBytes) where meanBytes > 0:
        sampleWeight = SampleWeight(meanBytes: meanBytes)
      case .counts(let counts): count(counts, time: event.time)
      case .carriedCounts(let bytes, let blocks):
        countedLive.bytes &+= bytes
        countedLive.blocks &+= blocks
        totals.liveBytes = UInt64(max(0, countedLive.bytes))
        totals.liveBlocks = UInt64(max(0, countedLive.blocks))
        notePeak(time: event.time)
      default: memory.apply(event)
      }
    }
  }

  /// A sampled trace's exact totals.
  private mutating func count(_ counts: AllocationCounts, time: UInt64) {
    totals.allocationCount &+= counts.allocations
    totals.freeCount &+= counts.frees
    totals.allocatedBytes &+= counts.requestedBytes
    totals.freedBytes &+= counts.usableBytesFreed
    countedLive.bytes &+= Int64(bitPattern: counts.usableBytesAllocated &- counts.usableBytesFreed)
    countedLive.blocks &+= Int64(bitPattern: counts.allocations &- counts.frees)
    totals.liveBytes = UInt64(max(0, countedLive.bytes))
    totals.liveBlocks = UInt64(max(0, countedLive.blocks))
    notePeak(time: time)
  }

  private mutating func notePeak(time: UInt64) {
    guard totals.liveBytes > totals.peakLiveBytes else { return }
    totals.peakLiveBytes = totals.liveBytes
    totals.peakLiveBlocks = totals.liveBlocks
    totals.peakTime = time
    peakEpoch &+= 1
  }

  private mutating func allocate(_ alloc: AllocationEvent) {
    let (kind, isNew) = kinds.kind(of: alloc)
    if isNew {
      kindStackSlots.append(
        pairSlots == nil
          ? stackSlot(alloc.stack)
          : pairSlot(StackCategory(stack: alloc.stack, category: alloc.category)))
      kindCategorySlots.append(categorySlot(alloc.category))
    }
    let stackSlot = Int(kindStackSlots[Int(kind)])
    let categorySlot = Int(kindCategorySlots[Int(kind)])
    // An id that is still live means a damaged or duplicated record: retire the old block so
    // the live figures stay consistent.
    if let previous = live.insert(alloc.id, kind) { retire(previous) }
    let (bytes, count) = weigh(alloc.size)
    if alloc.isCarriedOver {
      stackCounters[stackSlot].carry(bytes, count: count, epoch: peakEpoch)
      categoryCounters[categorySlot].carry(bytes, count: count, epoch: peakEpoch)
    } else {
      stackCounters[stackSlot].allocate(bytes, count: count, epoch: peakEpoch)
      categoryCounters[categorySlot].allocate(bytes, count: count, epoch: peakEpoch)
    }
    guard sampleWeight == nil else { return }  // the totals are the COUNTS records'
    if alloc.isCarriedOver {
      totals.carriedOverBlocks &+= 1
      totals.carriedOverBytes &+= alloc.size
    } else {
      lastAllocation = (alloc.id, Int32(stackSlot))
      totals.allocationCount &+= 1
      totals.allocatedBytes &+= alloc.size
    }
    totals.liveBytes &+= alloc.size
    totals.liveBlocks &+= 1
    notePeak(time: alloc.time)
  }

  private mutating func release(_ free: FreeEvent) {
    if let last = lastAllocation, last.id == free.id {
      stackTemporaryCounts[Int(last.stackSlot)] &+= 1
    }
    lastAllocation = nil
    guard let kind = live.remove(free.id) else {
      // Allocated before recording began (or in a chunk lost to a crash): nothing to undo.
      if sampleWeight == nil { totals.unmatchedFreeCount &+= 1 }
      return
    }
    retire(kind)
    guard sampleWeight == nil else { return }  // the totals are the COUNTS records'
    totals.freeCount &+= 1
    totals.freedBytes &+= kinds.sizes[Int(kind)]
  }

  /// A block's bytes and count in the counters: itself, or what a sample stands for.
  private func weigh(_ size: UInt64) -> (bytes: UInt64, count: UInt64) {
    guard let weight = sampleWeight else { return (size, 1) }
    return (weight.bytes(size), weight.scaledCount(size))
  }

  private mutating func retire(_ kind: Int32) {
    let size = kinds.sizes[Int(kind)]
    let (bytes, count) = weigh(size)
    stackCounters[Int(kindStackSlots[Int(kind)])].release(bytes, count: count, epoch: peakEpoch)
    categoryCounters[Int(kindCategorySlots[Int(kind)])].release(
      bytes, count: count, epoch: peakEpoch)
    guard sampleWeight == nil else { return }
    totals.liveBytes &-= size
    totals.liveBlocks &-= 1
  }

  private mutating func sampleRSS(_ sample: RSSSample) {
    totals.rssSampleCount &+= 1
    totals.peakRSSBytes = max(
      totals.peakRSSBytes ?? 0, sample.residentBytes, sample.peakBytes ?? 0)
    totals.lastRSSBytes = sample.residentBytes
  }

  private mutating func stackSlot(_ id: StackID) -> Int32 {
    let slot = stackSlots.slot(adding: id)
    if slot == stackIDs.count {
      stackIDs.append(id)
      stackCounters.append(UsageCounter())
      stackTemporaryCounts.append(0)
    }
    return Int32(slot)
  }

  private mutating func pairSlot(_ pair: StackCategory) -> Int32 {
    if let slot = pairSlots?[pair] { return slot }
    let slot = Int32(stackIDs.count)
    pairSlots?[pair] = slot
    stackIDs.append(pair.stack)
    stackCategories.append(pair.category)
    stackCounters.append(UsageCounter())
    stackTemporaryCounts.append(0)
    return slot
  }

  private mutating func categorySlot(_ id: CategoryID) -> Int32 {
    let slot = categorySlots.slot(adding: id)
    if slot == categoryCounters.count { categoryCounters.append(UsageCounter()) }
    return Int32(slot)
  }

}

/// A stack and one category of its blocks.
private struct StackCategory: Hashable {
  var stack: StackID
  var category: CategoryID
}
