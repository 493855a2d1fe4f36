import HeaplineTrace

/// The low-memory report that `heapline record --memory-limit` writes when the program's
/// footprint crosses its budget and the shim kills it, as the system writes one after a
/// low-memory kill: the time, the limit and the footprint; the largest categories (malloc
/// blocks and backing stores together) and stacks; the backing stores; the warnings that came
/// before, and what each observer freed.
///
/// The shim writes everything this needs to the trace before the kill, so the report can be
/// rendered again from the trace at any time.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace")
/// let report = StatisticsReport(statistics: stats, symbolizer: Symbolizer())
/// print(LowMemoryReportRenderer(program: "app").render(report))
/// ```
public struct LowMemoryReportRenderer: ReportRenderer {
  /// The program's name, for the title.
  public var program: String
  /// How many categories and stacks to list.
  public var top: Int

  /// A renderer for `program`'s report.
  public init(program: String, top: Int = 10) {
    self.program = program
    self.top = top
  }

  public func render(_ report: StatisticsReport) -> String {
    let statistics = report.statistics
    var lines = ["Low-memory report: '\(program)' (process \(statistics.trace.pid))"]
    lines.append("  Trace \(statistics.trace.path)")
    if let kill = statistics.memoryLimitKill {
      lines += TextReportRenderer.killLines(kill, warningCount: statistics.memoryWarnings.count)
        .map { "  " + $0 }
    } else {
      lines.append("  The trace records no memory-limit kill")
    }
    lines += [""] + TextReportRenderer.footprintLines(statistics.footprint)
    lines += [""] + categoryLines(statistics)
    lines += [""] + stackLines(report)
    if statistics.backingStores.totalCount > 0 {
      lines += [""] + TextReportRenderer.backingStoreLines(statistics.backingStores)
    }
    lines.append("")
    if statistics.memoryWarnings.isEmpty {
      lines += ["Memory warnings", "  (none before the kill)"]
    } else {
      lines += TextReportRenderer.warningLines(statistics.memoryWarnings)
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// Malloc categories and backing-store categories in one ranking, by bytes live at the end.
  private func categoryLines(_ statistics: Statistics) -> [String] {
    let malloc = statistics.categories.map {
      (
        name: $0.name, kind: "malloc, \($0.kind)", bytes: $0.persistentBytes,
        count: $0.persistentCount
      )
    }
    let stores = statistics.backingStores.categories.map {
      (name: $0.name, kind: "backing store", bytes: $0.persistentBytes, count: $0.persistentCount)
    }
    let ranked = (malloc + stores).filter { $0.bytes > 0 }
      .sorted { ($1.bytes, $0.name) < ($0.bytes, $1.name) }.prefix(top)
    var table = TextTable(
      header: ["Category", "Kind", "Live Bytes", "# Live"], leftAligned: [0, 1])
    for row in ranked {
      table.append([
        row.name, row.kind, TextReportRenderer.countText(row.bytes),
        TextReportRenderer.countText(row.count),
      ])
    }
    return ["Largest categories, live at the kill"]
      + (ranked.isEmpty ? ["  (nothing live)"] : table.lines)
  }

  /// The stacks holding the most at the end: malloc's, then those that reported backing stores.
  private func stackLines(_ report: StatisticsReport) -> [String] {
    let statistics = report.statistics
    var lines = ["Largest stacks, live at the kill"]
    let malloc = statistics.topStacks.filter { $0.liveBytes > 0 }.map { ($0, "malloc") }
    let stores = statistics.backingStores.topStacks.filter { $0.liveBytes > 0 }
      .map { ($0, "backing store") }
    let ranked = (malloc + stores).sorted { $0.0.liveBytes > $1.0.liveBytes }.prefix(top)
    guard !ranked.isEmpty else { return lines + ["  (none)"] }
    for (rank, (stack, kind)) in ranked.enumerated() {
      lines.append(
        "  [\(rank + 1)] \(TextReportRenderer.bytesText(stack.liveBytes)) live in "
          + TextReportRenderer.countText(stack.liveBlocks, kind == "malloc" ? "block" : "store")
          + " (\(kind))")
      lines += FrameLines.lines(report.frames(of: stack), style: FrameStyle())
    }
    return lines
  }
}
