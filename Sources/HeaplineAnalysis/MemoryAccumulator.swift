import HeaplineTrace

/// The part of the statistics pass that reads backing stores, memory warnings, footprints and
/// a memory-limit kill. ``StatisticsAccumulator`` hands it those events.
struct MemoryAccumulator {
  private struct LiveStore {
    var bytes: UInt64
    var categorySlot: Int
    var stackSlot: Int
  }

  private var live: [UInt64: LiveStore] = [:]
  private var categorySlots: [CategoryID: Int] = [:]
  private var categoryIDs: [CategoryID] = []
  private var categoryCounters: [UsageCounter] = []
  private var categoryPeaks: [UInt64] = []
  private var stackSlots: [StackID: Int] = [:]
  private var stackIDs: [StackID] = []
  private var stackCounters: [UsageCounter] = []
  /// Opens each time backing stores reach a new peak; see ``UsageCounter``.
  private var peakEpoch: UInt64 = 0
  private(set) var totals = BackingStoreStatistics()
  private(set) var warnings: [MemoryWarningStatistics] = []
  private var warningIndex: [UInt32: Int] = [:]
  private(set) var footprint: (time: UInt64, value: Footprint)?
  private(set) var kill: MemoryLimitKill?
  /// Malloc's and the backing stores' figures at the largest RSS sample.
  private(set) var atPeakRSS: FootprintBreakdown?

  mutating func apply(_ store: BackingStoreEvent) {
    switch store.kind {
    case .allocated:
      // A live id reported again replaces the store (the shim writes a release first).
      if let old = live.removeValue(forKey: store.id) { retire(old) }
      let entry = LiveStore(
        bytes: store.bytes, categorySlot: slot(store.category), stackSlot: slot(store.stack))
      live[store.id] = entry
      categoryCounters[entry.categorySlot].allocate(store.bytes, epoch: peakEpoch)
      stackCounters[entry.stackSlot].allocate(store.bytes, epoch: peakEpoch)
      categoryPeaks[entry.categorySlot] = max(
        categoryPeaks[entry.categorySlot], categoryCounters[entry.categorySlot].liveBytes)
      totals.liveBytes &+= store.bytes
      totals.liveCount &+= 1
      totals.totalBytes &+= store.bytes
      totals.totalCount &+= 1
      if totals.liveBytes > totals.peakBytes {
        totals.peakBytes = totals.liveBytes
        totals.peakTime = store.time
        peakEpoch &+= 1
      }
    case .released:
      guard let old = live.removeValue(forKey: store.id) else {
        totals.unmatchedReleaseCount &+= 1
        return
      }
      retire(old)
    }
  }

  /// Notes what accounted for RSS when a sample is the largest so far.
  mutating func sampleRSS(_ sample: RSSSample, mallocLiveBytes: UInt64, blocks: UInt64) {
    guard sample.residentBytes > atPeakRSS?.residentBytes ?? 0 else { return }
    atPeakRSS = FootprintBreakdown(
      time: sample.time, isMeasured: false, residentBytes: sample.residentBytes,
      mallocLiveBytes: mallocLiveBytes, mallocLiveBlocks: blocks, mallocOverheadBytes: nil,
      backingStoreBytes: totals.liveBytes, allocatorFreeBytes: nil)
  }

  mutating func apply(_ event: MemoryEvent) {
    switch event.detail {
    case .warning(let warning):
      warningIndex[warning.serial] = warnings.count
      warnings.append(MemoryWarningStatistics(time: event.time, warning: warning))
    case .response(let response):
      // A response to a warning raised before recording began has nothing to attach to.
      guard let index = warningIndex[response.serial] else { return }
      warnings[index].responses.append(response)
    case .footprint(let value):
      footprint = (event.time, value)
    case .limitExceeded(let limit):
      kill = MemoryLimitKill(time: event.time, limit: limit)
    case .sampling, .counts, .carriedCounts:
      break  // allocation figures: StatisticsAccumulator's
    }
  }

  /// The figures, with category names from `metadata` and the top `stackCount` stacks.
  func statistics(metadata: TraceMetadata, stackCount: Int) -> BackingStoreStatistics {
    var result = totals
    result.categories = categoryIDs.indices.map { index in
      let counter = categoryCounters[index]
      return BackingStoreCategoryStatistics(
        id: categoryIDs[index], name: metadata.category(categoryIDs[index]).name,
        persistentBytes: counter.liveBytes, persistentCount: counter.liveCount,
        transientCount: counter.totalCount &- counter.liveCount, totalBytes: counter.totalBytes,
        totalCount: counter.totalCount, peakBytes: categoryPeaks[index])
    }.sorted {
      ($1.persistentBytes, $1.totalBytes, $0.name) < ($0.persistentBytes, $0.totalBytes, $1.name)
    }
    let stacks = stackIDs.indices.map { index in
      let counter = stackCounters[index]
      return StackStatistics(
        id: stackIDs[index], frames: [], bytesAtPeak: counter.bytesAtPeak(finalEpoch: peakEpoch),
        liveBytes: counter.liveBytes, liveBlocks: counter.liveCount,
        allocationCount: counter.totalCount, totalBytes: counter.totalBytes)
    }.sorted {
      ($1.bytesAtPeak, $1.liveBytes, $1.totalBytes, $0.id) < (
        $0.bytesAtPeak, $0.liveBytes, $0.totalBytes, $1.id
      )
    }
    result.topStacks = stacks.prefix(stackCount).map { stack in
      var stack = stack
      stack.frames = metadata.frames(of: stack.id)
      return stack
    }
    return result
  }

  private mutating func retire(_ store: LiveStore) {
    categoryCounters[store.categorySlot].release(store.bytes, epoch: peakEpoch)
    stackCounters[store.stackSlot].release(store.bytes, epoch: peakEpoch)
    totals.liveBytes &-= store.bytes
    totals.liveCount &-= 1
  }

  private mutating func slot(_ id: CategoryID) -> Int {
    if let slot = categorySlots[id] { return slot }
    categorySlots[id] = categoryIDs.count
    categoryIDs.append(id)
    categoryCounters.append(UsageCounter())
    categoryPeaks.append(0)
    return categoryIDs.count - 1
  }

  private mutating func slot(_ id: StackID) -> Int {
    if let slot = stackSlots[id] { return slot }
    stackSlots[id] = stackIDs.count
    stackIDs.append(id)
    stackCounters.append(UsageCounter())
    return stackIDs.count - 1
  }
}
