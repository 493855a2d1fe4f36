import HeaplineTrace

/// The sections of the text report about memory beyond malloc's blocks: backing stores, the
/// footprint that reconciles RSS, memory warnings, and a memory-limit kill. Each appears only
/// when the trace has something to put in it (the footprint, when there is an RSS figure).
extension TextReportRenderer {
  static func memoryLines(_ statistics: Statistics) -> [String] {
    var lines: [String] = []
    if let kill = statistics.memoryLimitKill {
      lines += [""] + killLines(kill, warningCount: statistics.memoryWarnings.count)
    }
    let stores = statistics.backingStores
    if stores.totalCount > 0 || stores.unmatchedReleaseCount > 0 {
      lines += [""] + backingStoreLines(stores)
    }
    if let peak = statistics.footprintAtPeakRSS, stores.totalCount > 0 {
      lines += [""] + footprintLines(peak, title: "Footprint at the largest RSS sample")
    }
    if statistics.footprint.residentBytes != nil || statistics.footprint.isMeasured {
      lines += [""] + footprintLines(statistics.footprint)
    }
    if !statistics.memoryWarnings.isEmpty {
      lines += [""] + warningLines(statistics.memoryWarnings)
    }
    return lines
  }

  static func killLines(_ kill: MemoryLimitKill, warningCount: Int) -> [String] {
    let limit = kill.limit
    return [
      "Memory limit exceeded at \(TimeText.duration(kill.time)): footprint "
        + "\(bytesText(limit.footprintBytes)) \(binaryText(limit.footprintBytes)) of a "
        + "\(bytesText(limit.limitBytes)) \(binaryText(limit.limitBytes)) limit; the process was killed "
        + "(SIGKILL) after \(warningCount) memory warning\(warningCount == 1 ? "" : "s")"
    ]
  }

  static func backingStoreLines(_ stores: BackingStoreStatistics) -> [String] {
    var table = TextTable(header: [
      "Category", "Persistent Bytes", "# Persistent", "# Transient", "Total Bytes", "# Total",
      "Peak Bytes",
    ])
    for category in stores.categories {
      table.append([
        category.name, countText(category.persistentBytes), countText(category.persistentCount),
        countText(category.transientCount), countText(category.totalBytes),
        countText(category.totalCount), countText(category.peakBytes),
      ])
    }
    var lines = ["Backing stores (memory outside malloc, reported by the program)"] + table.lines
    let peak = stores.peakTime.map { " at \(TimeText.duration($0))" } ?? ""
    lines.append(
      "  Peak \(bytesText(stores.peakBytes)) \(binaryText(stores.peakBytes))\(peak); live at end "
        + "\(bytesText(stores.liveBytes)) in \(countText(stores.liveCount)) "
        + "store\(stores.liveCount == 1 ? "" : "s")")
    if stores.unmatchedReleaseCount > 0 {
      let count = stores.unmatchedReleaseCount
      lines.append(
        "  \(countText(count)) release\(count == 1 ? "" : "s") of stores the trace holds no report"
          + " of: reported before recording began, or never (ignored)")
    }
    return lines
  }

  static func footprintLines(_ footprint: FootprintBreakdown, title: String = "Footprint")
    -> [String]
  {
    let how =
      footprint.isMeasured
      ? "measured by the shim" : "from the RSS sample and the events before it"
    var table = TextTable(header: [], leftAligned: [0, 2])
    if let rss = footprint.residentBytes {
      table.append(["Resident (RSS)", bytesText(rss), binaryText(rss)])
    }
    table.append([
      "Malloc live", bytesText(footprint.mallocLiveBytes),
      "in " + countText(footprint.mallocLiveBlocks, "block"),
    ])
    table.append([
      "Malloc overhead", footprint.mallocOverheadBytes.map(bytesText) ?? "unknown",
      "usable size minus requested size",
    ])
    table.append([
      "Backing stores", bytesText(footprint.backingStoreBytes),
      binaryText(footprint.backingStoreBytes),
    ])
    if let rest = footprint.unaccountedBytes {
      let sign = rest < 0 ? "-" : ""
      let free = footprint.allocatorFreeBytes.map { ", malloc's free lists \(bytesText($0))" } ?? ""
      table.append([
        "Unaccounted", sign + bytesText(rest.magnitude),
        "code, stacks, other mappings\(free)",
      ])
    }
    return ["\(title) at \(TimeText.duration(footprint.time)) (\(how))"] + table.lines
  }

  static func warningLines(_ warnings: [MemoryWarningStatistics]) -> [String] {
    var table = TextTable(
      header: ["Time", "Level", "Source", "Footprint", "Limit", "Freed", "By observer"],
      leftAligned: [1, 2, 6])
    for warning in warnings {
      let limit = warning.warning.limitBytes.map(countText) ?? ""
      let observers = warning.responses.map { "\($0.observer) \(countText($0.freedBytes))" }
      table.append([
        TimeText.duration(warning.time), warning.warning.level.description,
        warning.warning.source.description, countText(warning.warning.footprintBytes), limit,
        countText(warning.freedBytes),
        observers.isEmpty ? "(no observer)" : observers.joined(separator: ", "),
      ])
    }
    return ["Memory warnings"] + table.lines
  }

  static func countText(_ value: UInt64) -> String { ByteCountText.grouped(value) }
  /// `1 block`, `2,048 blocks`.
  static func countText(_ value: UInt64, _ noun: String) -> String {
    ByteCountText.grouped(value) + " " + noun + (value == 1 ? "" : "s")
  }
  static func bytesText(_ value: UInt64) -> String { ByteCountText.grouped(value) + " B" }
  static func binaryText(_ value: UInt64) -> String {
    value >= 1024 ? "(\(ByteCountText.binary(value)))" : ""
  }
}
