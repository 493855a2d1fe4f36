import HeaplineTrace

/// The human-readable report: header, totals, the Object Alloc category table and the top
/// stacks with symbolized frames.
///
/// Byte counts are exact, with thousands separators (`4,800 B`), and a binary-unit form
/// beside them from 1 KiB up (`(4.69 KiB)`).
public struct TextReportRenderer: ReportRenderer {
  /// How frames are written.
  public var style: FrameStyle
  /// How many categories the table lists, the rest summed on one line; `nil` for all.
  public var categoryLimit: Int?
  /// What ranks the stacks, for the header; the statistics did the ranking.
  public var order: StackOrder

  /// Creates a text renderer that writes frames in `style` and lists the first `categoryLimit`
  /// categories (all for `nil`); `order` names the stacks' ranking in the header.
  public init(
    style: FrameStyle = FrameStyle(), categoryLimit: Int? = nil, order: StackOrder = .peak
  ) {
    self.style = style
    self.categoryLimit = categoryLimit.map { max(0, $0) }
    self.order = order
  }

  public func render(_ report: StatisticsReport) throws -> String {
    var text = headText(report)
    stackLines(report) { text += $0 }
    return text
  }

  /// Writes the report to `output` as it is made: a large `--top` lists as many stacks as
  /// asked, and their text, held whole, took several times the analysis's memory.
  public func write(_ report: StatisticsReport, to output: inout FileOutput) throws(AnalysisError) {
    try output.write(headText(report))
    var failure: AnalysisError?
    stackLines(report) { text in
      guard failure == nil else { return }
      do throws(AnalysisError) { try output.write(text) } catch { failure = error }
    }
    if let failure { throw failure }
  }

  /// Everything before the stacks, and the blank line after it.
  private func headText(_ report: StatisticsReport) -> String {
    let statistics = report.statistics
    var lines = headerLines(statistics.trace)
    if let weight = statistics.sampleWeight { lines.append(Self.samplingLine(weight)) }
    lines += [""] + totalsLines(statistics.totals, sampled: statistics.sampleWeight != nil)
    lines += [""] + categoryLines(statistics.categories)
    if statistics.totals.carriedOverBlocks > 0 {
      // A later file of a rotated recording: its blocks carried over are persistent or
      // transient, but none is one of its allocations.
      lines.append(
        "  Persistent and transient include the \(Self.count(statistics.totals.carriedOverBlocks))"
          + " blocks carried over; Total Bytes and # Total are this file's allocations alone")
    }
    lines += Self.memoryLines(statistics)
    return lines.joined(separator: "\n") + "\n\n"
  }

  private func headerLines(_ trace: TraceSummary) -> [String] {
    var lines = ["Heapline report for '\(trace.path)'"]
    let mode = trace.isRecordedInProcess ? " (recorded in process)" : ""
    lines.append("  Process \(trace.pid)\(mode), \(TimeText.duration(trace.durationNanoseconds))")
    if let ending = trace.trailer?.unfinishedEnding {
      let whole = trace.trailer?.flags.contains(.buffersLost) == true ? "INCOMPLETE" : "complete"
      lines.append("  Trace \(whole), \(ending)")
    } else if trace.isComplete, trace.endReason == .writeFailed {
      // Whole as a file, but not as a record of the run ("Trace complete, a write failed…")
      lines.append(
        "  Trace INCOMPLETE: writing it failed, so what the program did after that is missing")
    } else if trace.isComplete {
      let status = trace.endReason == .exited ? trace.exitStatus.map { " with status \($0)" } : nil
      lines.append(
        "  Trace complete" + (trace.endReason.map { ", \(Self.describe($0))" } ?? "")
          + (status ?? ""))
    } else if let cut = trace.cutShort {
      lines.append(
        "  Trace INCOMPLETE: cut short; \(cut.bytes) bytes of a partial chunk at offset"
          + " \(cut.offset) were not read")
    } else if let offset = trace.lastCompleteChunkOffset {
      lines.append(
        "  Trace INCOMPLETE: no trailer; read up to its last complete chunk at offset \(offset)")
    } else {
      lines.append("  Trace INCOMPLETE: no trailer and no complete chunk")
    }
    if trace.lostEvents.total > 0 {
      lines.append("  Lost events: " + trace.lostEvents.sentence)
    }
    if let cut = trace.trailer?.stackFramesCut, cut > 0 {
      let frames = (cut == UInt32.max ? "at least " : "") + Self.count(UInt64(cut), "frame")
      lines.append(
        "  Stacks cut short: \(frames) did not fit in the stack table; their stacks end at"
          + " \"(frames lost: the stack table was full)\" under the last frame kept")
    }
    if trace.trailer?.flags.contains(.buffersLost) == true {
      lines.append(
        "  Events missing: some of the shim's buffers were outside the memory shared with"
          + " heapline record (it could not grow), and the program ended before they were"
          + " written: what they held is not in the figures, uncounted")
    }
    if trace.trailer?.flags.contains(.categoriesFull) == true {
      lines.append(
        "  Categories full: the shim had no room for more classes or names, so objects of the"
          + " classes (and blocks of the scopes) it met after that count in their size classes")
    }
    if let endTime = trace.endTime {
      lines.append("  Statistics as they stood at \(TimeText.duration(endTime))")
    }
    return lines
  }

  /// What a sampled trace's figures are: the totals counted, the rest estimated.
  static func samplingLine(_ weight: SampleWeight) -> String {
    "  Sampled, one allocation every \(Self.count(weight.meanBytes, "byte")) on average: totals"
      + " are exact (live bytes are usable bytes; the peak is the largest that the per-thread"
      + " counts show, each within 64 KiB of its thread's); categories and stacks are estimates"
  }

  /// A sampled trace's frees are counted in usable bytes, and its peak at the counters' pace.
  private func totalsLines(_ totals: AllocationTotals, sampled: Bool) -> [String] {
    var table = TextTable(header: [], leftAligned: [0, 2])
    table.append(["Allocations", Self.count(totals.allocationCount), ""])
    table.append(["Frees", Self.count(totals.freeCount), ""])
    if totals.carriedOverBlocks > 0 {
      table.append([
        "Carried over", Self.count(totals.carriedOverBlocks),
        "blocks live when this file began (\(Self.count(totals.carriedOverBytes, "byte"))): live,"
          + " not allocations",
      ])
    }
    if totals.unmatchedFreeCount > 0 {
      table.append([
        "Unmatched frees", Self.count(totals.unmatchedFreeCount),
        "(frees of no allocation that the trace holds before them; ignored)",
      ])
    }
    table.append([
      "Bytes allocated", Self.bytes(totals.allocatedBytes), Self.human(totals.allocatedBytes),
    ])
    table.append([
      sampled ? "Usable bytes freed" : "Bytes freed", Self.bytes(totals.freedBytes),
      Self.human(totals.freedBytes),
    ])
    let peakTime = totals.peakTime.map { "at \(TimeText.duration($0))" }
    table.append([
      "Peak live", Self.bytes(totals.peakLiveBytes),
      Self.detail(
        Self.human(totals.peakLiveBytes), "in " + Self.count(totals.peakLiveBlocks, "block"),
        peakTime ?? ""),
    ])
    table.append([
      "Live at end", Self.bytes(totals.liveBytes),
      Self.detail(Self.human(totals.liveBytes), "in " + Self.count(totals.liveBlocks, "block")),
    ])
    if totals.markCount > 0 {
      table.append(["Marks", Self.count(totals.markCount), ""])
    }
    if let peakRSS = totals.peakRSSBytes {
      table.append(["Peak RSS", Self.bytes(peakRSS), Self.human(peakRSS)])
    }
    if let lastRSS = totals.lastRSSBytes {
      table.append(["Last RSS", Self.bytes(lastRSS), Self.human(lastRSS)])
    }
    return ["Totals"] + table.lines
  }

  private func categoryLines(_ categories: [CategoryStatistics]) -> [String] {
    guard !categories.isEmpty else { return ["Categories", "  (no allocations)"] }
    var table = TextTable(header: [
      "Category", "Persistent Bytes", "# Persistent", "# Transient", "Total Bytes", "# Total",
    ])
    let shown = categories.prefix(categoryLimit ?? categories.count)
    for category in shown {
      table.append([
        FrameStyle.cutInMiddle(category.name, to: Self.categoryNameWidth),
        Self.count(category.persistentBytes), Self.count(category.persistentCount),
        Self.count(category.transientCount), Self.count(category.totalBytes),
        Self.count(category.totalCount),
      ])
    }
    let rest = categories.dropFirst(shown.count)
    guard !rest.isEmpty else { return ["Categories"] + table.lines }
    let persistent = rest.reduce(UInt64(0)) { $0 &+ $1.persistentBytes }
    let total = rest.reduce(UInt64(0)) { $0 &+ $1.totalBytes }
    return ["Categories"] + table.lines + [
      "  … and \(Self.count(UInt64(rest.count))) more: \(Self.count(persistent))"
        + " persistent bytes, \(Self.count(total)) total bytes"
    ]
  }

  /// The stacks' section, given to `each` a stack at a time, each piece's lines ended. Each
  /// distinct frame is classified once (FrameStyle.traits reads its names), not once per stack
  /// that holds it: 65,536 stacks of 34 frames took 5 s, not 0.4 s.
  private func stackLines(_ report: StatisticsReport, _ each: (String) -> Void) {
    let stacks = report.statistics.topStacks
    let stackCount = report.statistics.stackCount
    let byFunction = report.grouping == .function
    let what = byFunction ? "allocating functions" : "allocation stacks"
    guard stackCount > 0 else {
      each((byFunction ? "Top functions" : "Top stacks") + "\n  (none)\n")
      return
    }
    each("Top \(stacks.count) of \(stackCount) \(what), \(order.phrase)\n")
    var known: [UInt64: (frames: [SymbolizedFrame], traits: [FrameStyle.Traits])] = [:]
    for (rank, stack) in stacks.enumerated() {
      var lines = [""]
      let atPeak = "\(Self.count(stack.bytesAtPeak)) B at peak"
      let atEnd =
        "\(Self.count(stack.liveBytes)) B live in \(Self.count(stack.liveBlocks, "block")) at end"
      let made = Self.count(stack.allocationCount, "allocation")
      let total = "\(Self.count(stack.totalBytes)) B total"
      var extra = order == .temporary ? ", \(Self.count(stack.temporaryCount)) temporary" : ""
      if byFunction, let merged = report.mergedStackCounts[stack.id] {
        extra += "; from \(Self.count(UInt64(merged), "stack"))"
      }
      lines.append("  [\(rank + 1)] \(atPeak); \(atEnd); \(made), \(total)\(extra)")
      var frames: [SymbolizedFrame] = []
      var traits: [FrameStyle.Traits] = []
      for pc in stack.frames {
        if known[pc] == nil {
          let expanded = report.frames(atPC: pc)
          known[pc] = (expanded, expanded.map(style.traits))
        }
        frames += known[pc]!.frames
        traits += known[pc]!.traits
      }
      lines += FrameLines.lines(frames, traits: traits, style: style)
      each(lines.joined(separator: "\n") + "\n")
    }
  }

  /// The longest category name the table shows whole: with the five number columns, a line
  /// stays within 160 characters.
  static let categoryNameWidth = 88

  private static func count(_ value: UInt64) -> String {
    ByteCountText.grouped(value)
  }

  /// `1 block`, `2,048 blocks`.
  private static func count(_ value: UInt64, _ noun: String) -> String {
    ByteCountText.grouped(value) + " " + noun + (value == 1 ? "" : "s")
  }

  /// The exact count of bytes: `4,800 B`.
  private static func bytes(_ value: UInt64) -> String {
    ByteCountText.grouped(value) + " B"
  }

  /// The binary-unit form, from 1 KiB up: `(4.69 KiB)`.
  private static func human(_ value: UInt64) -> String {
    value >= 1024 ? "(\(ByteCountText.binary(value)))" : ""
  }

  /// The non-empty parts, joined.
  private static func detail(_ parts: String..., separator: String = " ") -> String {
    parts.filter { !$0.isEmpty }.joined(separator: separator)
  }

  private static func describe(_ reason: TraceTrailer.EndReason) -> String {
    switch reason {
    case .exited: "the process exited"
    case .stopped: "stopped through the API"
    case .writeFailed: "a write failed, so later events are missing"
    case .memoryLimit: "the process exceeded its memory limit and was killed"
    case .endedUnfinished: "the process ended before the shim could finish"
    case .exec: "the process ran exec: the next program's trace is at the path asked for"
    case .rotated: "rotated: the recording goes on in the next file"
    case .seccomp:
      "the program installed a seccomp filter that forbids the shim's system calls, and the"
        + " recording ended there"
    default: "end reason \(reason.rawValue)"
    }
  }
}
