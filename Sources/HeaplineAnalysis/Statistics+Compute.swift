import HeaplineTrace

extension Statistics {
  /// Reads the trace at `path` and computes its statistics.
  ///
  /// ```swift
  /// let stats = try Statistics(contentsOf: "app.trace", options: .init(topStackCount: 5))
  /// ```
  ///
  /// - Throws: `TraceError` when the file cannot be opened or is damaged.
  public init(contentsOf path: String, options: StatisticsOptions = StatisticsOptions())
    throws(TraceError)
  {
    try self.init(reader: TraceReader(path: path), options: options)
  }

  /// Computes the statistics of an open trace in one pass over its events.
  ///
  /// With ``StatisticsOptions/endTime`` set, the pass stops at the first event after it, then
  /// reads the rest of the trace for its stack and category records only.
  public init(reader: TraceReader, options: StatisticsOptions = StatisticsOptions())
    throws(TraceError)
  {
    var events = LookaheadEvents(reader.events(leakBlocks: false))
    var accumulator = StatisticsAccumulator(splitsCategories: options.splitsStacksByCategory)
    while let event = try events.next(prefetching: { accumulator.prefetch($0) }) {
      if let endTime = options.endTime, event.time > endTime {
        try events.drainMetadata()
        break
      }
      accumulator.apply(event)
    }
    accumulator.forgetLiveBlocks()
    self.init(
      reader: reader, options: options, accumulator: accumulator,
      metadata: events.stream.metadata)
  }

  private init(
    reader: TraceReader, options: StatisticsOptions, accumulator: StatisticsAccumulator,
    metadata: TraceMetadata
  ) {
    let epoch = accumulator.peakEpoch
    // A sampled trace's counters hold weights in fractions of an allocation.
    let sampled = accumulator.sampleWeight != nil
    func whole(_ count: UInt64) -> UInt64 { sampled ? SampleWeight.wholeCount(count) : count }
    let categories = zip(accumulator.categoryIDs, accumulator.categoryCounters).map {
      id, counter in
      let info = metadata.category(id)
      return CategoryStatistics(
        id: id, kind: info.kind, name: info.name, persistentBytes: counter.liveBytes,
        persistentCount: whole(counter.liveCount),
        transientCount: whole(counter.totalCount &+ counter.carriedCount)
          &- whole(counter.liveCount),
        totalBytes: counter.totalBytes, totalCount: whole(counter.totalCount),
        bytesAtPeak: counter.bytesAtPeak(finalEpoch: epoch))
    }
    let stacks = accumulator.stackIDs.indices.map { slot in
      let counter = accumulator.stackCounters[slot]
      return StackStatistics(
        id: accumulator.stackIDs[slot], frames: [],
        bytesAtPeak: counter.bytesAtPeak(finalEpoch: epoch), liveBytes: counter.liveBytes,
        liveBlocks: whole(counter.liveCount), allocationCount: whole(counter.totalCount),
        totalBytes: counter.totalBytes, temporaryCount: accumulator.stackTemporaryCounts[slot],
        category: options.splitsStacksByCategory ? accumulator.stackCategories[slot] : nil)
    }
    var topStacks = Array(
      stacks.sorted(by: options.stackOrder.ranksHigher).prefix(options.topStackCount))
    for index in topStacks.indices {
      topStacks[index].frames = metadata.frames(of: topStacks[index].id)
    }
    self.init(
      trace: Self.summary(
        of: reader, options: options, lastEventTime: accumulator.lastEventTime,
        metadata: metadata),
      totals: accumulator.totals, categories: categories.sorted(by: Self.ranksHigher),
      topStacks: topStacks, stackCount: stacks.count, modules: metadata.modules)
    sampleWeight = accumulator.sampleWeight
    applyMemory(accumulator, metadata: metadata, options: options)
  }

  private mutating func applyMemory(
    _ accumulator: StatisticsAccumulator, metadata: TraceMetadata, options: StatisticsOptions
  ) {
    let memory = accumulator.memory
    backingStores = memory.statistics(metadata: metadata, stackCount: options.topStackCount)
    memoryWarnings = memory.warnings
    memoryLimitKill = memory.kill
    footprintAtPeakRSS = memory.atPeakRSS
    if let (time, value) = memory.footprint {
      footprint = FootprintBreakdown(time: time, footprint: value)
    } else {
      footprint = FootprintBreakdown(
        time: trace.durationNanoseconds, isMeasured: false, residentBytes: totals.lastRSSBytes,
        mallocLiveBytes: totals.liveBytes, mallocLiveBlocks: totals.liveBlocks,
        mallocOverheadBytes: nil, backingStoreBytes: backingStores.liveBytes,
        allocatorFreeBytes: nil)
    }
  }

  private static func summary(
    of reader: TraceReader, options: StatisticsOptions, lastEventTime: UInt64,
    metadata: TraceMetadata
  ) -> TraceSummary {
    var duration = reader.trailer?.endTime ?? max(lastEventTime, reader.endTimeLowerBound)
    if let endTime = options.endTime { duration = min(duration, endTime) }
    var summary = TraceSummary(
      path: reader.path, pid: reader.header.pid,
      isRecordedInProcess: reader.header.isRecordedInProcess,
      startRealtimeNanoseconds: reader.header.startRealtimeNanoseconds,
      durationNanoseconds: duration, isComplete: reader.isComplete,
      lastCompleteChunkOffset: reader.lastCompleteChunkOffset, endTime: options.endTime,
      endReason: reader.trailer?.endReason)
    summary.trailer = reader.trailer
    summary.cutShort = reader.cutShort
    summary.lostEvents = LostEvents(trailer: reader.trailer, metadata: metadata)
    return summary
  }

  /// Categories: persistent bytes, then total bytes, largest first; then by name.
  private static func ranksHigher(_ lhs: CategoryStatistics, _ rhs: CategoryStatistics) -> Bool {
    if lhs.persistentBytes != rhs.persistentBytes {
      return lhs.persistentBytes > rhs.persistentBytes
    }
    if lhs.totalBytes != rhs.totalBytes { return lhs.totalBytes > rhs.totalBytes }
    return (lhs.name, lhs.id) < (rhs.name, rhs.id)
  }
}
