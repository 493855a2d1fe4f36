import HeaplineTrace

/// The five weights a call tree or flame graph of the page can show for one stack.
struct HTMLPageStackWeights: Hashable {
  /// Bytes the stack held at the moment of the peak of live bytes.
  var bytesAtPeak: UInt64 = 0
  /// Bytes it allocated in all.
  var allocatedBytes: UInt64 = 0
  /// Allocations it made.
  var allocationCount: UInt64 = 0
  /// Its temporary allocations: those freed before any other allocation or free happened in
  /// the process, as heaptrack counts them.
  var temporaryCount: UInt64 = 0
  /// Bytes of its blocks that the page's leak scan found lost.
  var leakedBytes: UInt64 = 0

  /// In the order of the page's weight menu.
  var values: [UInt64] {
    [bytesAtPeak, allocatedBytes, allocationCount, temporaryCount, leakedBytes]
  }

  mutating func add(_ other: HTMLPageStackWeights) {
    bytesAtPeak &+= other.bytesAtPeak
    allocatedBytes &+= other.allocatedBytes
    allocationCount &+= other.allocationCount
    temporaryCount &+= other.temporaryCount
    leakedBytes &+= other.leakedBytes
  }

  /// Reads the trace once and weighs every stack but for its leaks, which come from a scan
  /// the caller chooses. Returns the weights and the metadata the pass read.
  static func compute(reader: TraceReader) throws(AnalysisError)
    -> (weights: [StackID: HTMLPageStackWeights], metadata: TraceMetadata)
  {
    var live = LiveTable<(size: UInt64, slot: Int)>()
    var slots: [StackID: Int] = [:]
    var stacks: [StackID] = []
    var counters: [UsageCounter] = []
    var temporary: [UInt64] = []
    var liveBytes: UInt64 = 0
    var peakBytes: UInt64 = 0
    var epoch: UInt64 = 0
    var lastAllocation: AllocID?
    var events = LookaheadEvents(reader.events())
    while let event = try events.nextEvent(prefetching: { live.prefetch($0) }) {
      switch event {
      case .alloc(let alloc):
        let slot =
          slots[alloc.stack]
          ?? {
            slots[alloc.stack] = stacks.count
            stacks.append(alloc.stack)
            counters.append(UsageCounter())
            temporary.append(0)
            return stacks.count - 1
          }()
        if let previous = live.insert(alloc.id, (alloc.size, slot)) {
          counters[previous.slot].release(previous.size, epoch: epoch)
          liveBytes &-= previous.size
        }
        counters[slot].allocate(alloc.size, epoch: epoch)
        liveBytes &+= alloc.size
        if liveBytes > peakBytes {
          peakBytes = liveBytes
          epoch &+= 1
        }
        lastAllocation = alloc.id
      case .free(let free):
        defer { lastAllocation = nil }
        guard let block = live.remove(free.id) else { continue }
        if free.id == lastAllocation { temporary[block.slot] &+= 1 }
        counters[block.slot].release(block.size, epoch: epoch)
        liveBytes &-= block.size
      default: continue
      }
    }
    do { try events.drainMetadata() } catch { throw .trace(error) }
    var weights: [StackID: HTMLPageStackWeights] = [:]
    for (slot, stack) in stacks.enumerated() {
      weights[stack] = HTMLPageStackWeights(
        bytesAtPeak: counters[slot].bytesAtPeak(finalEpoch: epoch),
        allocatedBytes: counters[slot].totalBytes, allocationCount: counters[slot].totalCount,
        temporaryCount: temporary[slot])
    }
    return (weights, events.stream.metadata)
  }
}
