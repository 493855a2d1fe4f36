import HeaplineTrace

/// The members of the JSON report about memory beyond malloc's blocks, documented in
/// <doc:ReportJSON>: `backing_stores`, `footprint`, `footprint_at_peak_rss`, `memory_warnings`,
/// `memory_limit_kill`.
extension JSONReportRenderer {
  static func memoryMembers(_ report: StatisticsReport, frames: StackFrames)
    -> [(String, JSONValue)]
  {
    let statistics = report.statistics
    return [
      ("backing_stores", backingStores(statistics.backingStores, frames: frames)),
      ("footprint", footprint(statistics.footprint)),
      ("footprint_at_peak_rss", statistics.footprintAtPeakRSS.map(footprint) ?? .null),
      ("memory_warnings", .array(statistics.memoryWarnings.map(warning))),
      ("memory_limit_kill", statistics.memoryLimitKill.map(kill) ?? .null),
    ]
  }

  private static func backingStores(
    _ stores: BackingStoreStatistics, frames: StackFrames
  ) -> JSONValue {
    .object([
      ("live_bytes", .unsigned(stores.liveBytes)),
      ("live_count", .unsigned(stores.liveCount)),
      ("peak_bytes", .unsigned(stores.peakBytes)),
      ("peak_time_ns", .unsigned(stores.peakTime)),
      ("total_bytes", .unsigned(stores.totalBytes)),
      ("total_count", .unsigned(stores.totalCount)),
      ("unmatched_releases", .unsigned(stores.unmatchedReleaseCount)),
      (
        "categories",
        .array(
          stores.categories.map { category in
            .object([
              ("id", .unsigned(category.id.rawValue)),
              ("name", .string(category.name)),
              ("persistent_bytes", .unsigned(category.persistentBytes)),
              ("persistent_count", .unsigned(category.persistentCount)),
              ("transient_count", .unsigned(category.transientCount)),
              ("total_bytes", .unsigned(category.totalBytes)),
              ("total_count", .unsigned(category.totalCount)),
              ("peak_bytes", .unsigned(category.peakBytes)),
            ])
          })
      ),
      (
        "top_stacks",
        .array(
          stores.topStacks.enumerated().map { rank, stack in
            Self.stack(stack, rank: rank + 1, frames: frames.json(of: stack))
          })
      ),
    ])
  }

  private static func footprint(_ footprint: FootprintBreakdown) -> JSONValue {
    .object([
      ("time_ns", .unsigned(footprint.time)),
      ("measured", .bool(footprint.isMeasured)),
      ("resident_bytes", .unsigned(footprint.residentBytes)),
      ("malloc_live_bytes", .unsigned(footprint.mallocLiveBytes)),
      ("malloc_live_blocks", .unsigned(footprint.mallocLiveBlocks)),
      ("malloc_overhead_bytes", .unsigned(footprint.mallocOverheadBytes)),
      ("backing_store_bytes", .unsigned(footprint.backingStoreBytes)),
      ("allocator_free_bytes", .unsigned(footprint.allocatorFreeBytes)),
      ("unaccounted_bytes", footprint.unaccountedBytes.map { .signed(Int($0)) } ?? .null),
    ])
  }

  private static func warning(_ warning: MemoryWarningStatistics) -> JSONValue {
    .object([
      ("serial", .unsigned(UInt64(warning.warning.serial))),
      ("time_ns", .unsigned(warning.time)),
      ("level", .string(warning.warning.level.description)),
      ("source", .string(warning.warning.source.description)),
      ("footprint_bytes", .unsigned(warning.warning.footprintBytes)),
      ("limit_bytes", .unsigned(warning.warning.limitBytes)),
      ("freed_bytes", .unsigned(warning.freedBytes)),
      (
        "responses",
        .array(
          warning.responses.map { response in
            .object([
              ("observer", .string(response.observer)),
              ("freed_bytes", .unsigned(response.freedBytes)),
            ])
          })
      ),
    ])
  }

  private static func kill(_ kill: MemoryLimitKill) -> JSONValue {
    .object([
      ("time_ns", .unsigned(kill.time)),
      ("footprint_bytes", .unsigned(kill.limit.footprintBytes)),
      ("limit_bytes", .unsigned(kill.limit.limitBytes)),
    ])
  }
}
