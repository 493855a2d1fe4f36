import HeaplineTrace

/// The data the page embeds, as JSON text: the report that `report --format json` writes
/// (with ``HTMLPageOptions/reportStacks`` stacks), then the timeline, the grid of instants and
/// ranges, the call-tree stacks, the leaks and the low-memory report.
struct HTMLPageData {
  let options: HTMLPageOptions
  let symbolizer: Symbolizer

  /// `{"report": …, "page": …}`, on one line.
  func json(reader: TraceReader) throws(AnalysisError) -> String {
    let statistics: Statistics
    do {
      statistics = try Statistics(
        reader: reader, options: StatisticsOptions(topStackCount: options.reportStacks))
    } catch {
      throw .trace(error)
    }
    let report = StatisticsReport(statistics: statistics, symbolizer: symbolizer)
    var reportText = StringOutput()
    try JSONReportRenderer().write(report, to: &reportText)
    var (weights, metadata) = try HTMLPageStackWeights.compute(reader: reader)
    let leakReport = leaks(metadata: metadata, path: reader.path)
    for block in leakReport?.scan.blocks ?? [] {
      weights[block.stack, default: .init()].leakedBytes &+= block.size
    }
    var frames = HTMLPageFrames(style: options.frameStyle)
    let (stacks, stackJSON) = pageStacks(weights, metadata: metadata, frames: &frames)
    let timeline = try TimelineScan(reader: reader, options: timelineOptions(reader))
    let categories = gridCategories(statistics)
    let bucket = timeline.options.interval * UInt64(max(1, options.bucketSteps))
    var grid = try HTMLPageGrid(
      reader: reader, bucketLength: bucket,
      bucketCount: timeline.endTime == 0 ? 1 : Int((timeline.endTime - 1) / bucket) + 1,
      stack: { stacks[$0] ?? stackJSON.count - 1 },
      category: { categories.indices[$0] ?? categories.names.count - 1 })
    grid.coarsen(toAtMost: options.gridCells)
    let page = JSONValue.object([
      ("timeline", try HTMLPageTimeline.json(timeline)),
      (
        "leak_scans",
        .array(
          metadata.leakScans.values.sorted { $0.id < $1.id }.map { scan in
            .array([.unsigned(scan.time), .unsigned(scan.id), .string(scan.trigger.description)])
          })
      ),
      (
        "grid",
        .object([
          ("bucket_ns", .unsigned(grid.bucketLength)),
          ("buckets", .signed(grid.bucketCount)),
          ("end_ns", .unsigned(timeline.endTime)),
          ("categories", .array(categories.names.map { .string($0) })),
          ("sites", .array(grid.sites.map { .array($0.map { .signed($0) }) })),
          ("cells", .array(grid.flatCells.map { .unsigned($0) })),
        ])
      ),
      ("stacks", .array(stackJSON)),
      (
        "leaks",
        leakReport.map { HTMLPageLeaks.json($0, limit: options.leakGroups, frames: &frames) }
          ?? .null
      ),
      ("leak_scan_failure", metadata.failedLeakScans.last.map { .string($0.reason) } ?? .null),
      (
        "low_memory_report",
        statistics.memoryLimitKill == nil
          ? .null
          : .string(LowMemoryReportRenderer(program: programName(statistics)).render(report))
      ),
      ("frames", frames.json),
    ])
    return "{\"report\":" + HTMLPage.compact(reportText.text) + ",\"page\":"
      + page.compactRendered()
      + "}"
  }

  /// The traced program's file name: the shim maps the main program first.
  private func programName(_ statistics: Statistics) -> String {
    let path = statistics.modules.first?.path ?? ""
    return path.split(separator: "/").last.map(String.init) ?? "the program"
  }

  private func timelineOptions(_ reader: TraceReader) throws(AnalysisError) -> TimelineOptions {
    let end: UInt64
    do { end = try reader.endTime() } catch { throw .trace(error) }
    let points = UInt64(max(1, options.timelinePoints))
    return try TimelineOptions(
      intervalNanoseconds: max(1, (end + points - 1) / points),
      grouping: .categories(top: options.timelineCategories))
  }

  /// The last complete leak scan, or the last one, grouped as `heapline leaks` groups it.
  private func leaks(metadata: TraceMetadata, path: String) -> LeakReport? {
    let scans = metadata.leakScans.values.sorted { $0.id < $1.id }
    guard let chosen = scans.last(where: \.isComplete) ?? scans.last else { return nil }
    return LeakReport(
      scan: chosen, metadata: metadata, path: path, scans: scans, symbolizer: symbolizer)
  }

  /// The stacks that rank among the top ones for any weight, by bytes at the peak, then an
  /// "other" row that sums the rest; and each stack's page index.
  private func pageStacks(
    _ weights: [StackID: HTMLPageStackWeights], metadata: TraceMetadata,
    frames: inout HTMLPageFrames
  ) -> ([StackID: Int], [JSONValue]) {
    var chosen = Set<StackID>()
    for weight in 0..<5 {
      let ranked = weights.filter { $0.value.values[weight] > 0 }
        .sorted { ($1.value.values[weight], $0.key) < ($0.value.values[weight], $1.key) }
      chosen.formUnion(ranked.prefix(options.stacksPerWeight).map(\.key))
    }
    let ordered = chosen.sorted {
      (weights[$1]!.bytesAtPeak, weights[$1]!.allocatedBytes, $0)
        < (weights[$0]!.bytesAtPeak, weights[$0]!.allocatedBytes, $1)
    }
    let pcs = ordered.flatMap { metadata.frames(of: $0) }
    let symbols = symbolizer.symbolize(pcs, modules: metadata.modules)
    var other = HTMLPageStackWeights()
    for (id, weight) in weights where !chosen.contains(id) { other.add(weight) }
    var indices: [StackID: Int] = [:]
    var json: [JSONValue] = []
    for id in ordered {
      indices[id] = json.count
      let stackFrames = metadata.frames(of: id).flatMap { symbols[$0] ?? [SymbolizedFrame(pc: $0)] }
      json.append(
        .object([
          ("id", .unsigned(id.rawValue)),
          ("frames", frames.indices(of: stackFrames)),
          ("weights", .array(weights[id]!.values.map { .unsigned($0) })),
        ]))
    }
    json.append(
      .object([
        ("id", .null), ("frames", .array([])),
        ("weights", .array(other.values.map { .unsigned($0) })),
      ]))
    return (indices, json)
  }

  /// The categories of the grid: the top ones by bytes at the peak, persistent bytes and
  /// total bytes, in the report's order, then "(other categories)".
  private func gridCategories(_ statistics: Statistics)
    -> (names: [String], indices: [CategoryID: Int])
  {
    var chosen = Set<CategoryID>()
    let columns: [(CategoryStatistics) -> UInt64] = [
      \.bytesAtPeak, \.persistentBytes, \.totalBytes,
    ]
    for column in columns {
      let ranked = statistics.categories.sorted { column($0) > column($1) }
      chosen.formUnion(ranked.prefix(options.categoriesPerColumn).map(\.id))
    }
    var names: [String] = []
    var indices: [CategoryID: Int] = [:]
    for category in statistics.categories where chosen.contains(category.id) {
      indices[category.id] = names.count
      names.append(category.name)
    }
    return (names + ["(other categories)"], indices)
  }
}
