import HeaplineAnalysis
import HeaplinePprof
import HeaplineTrace

/// The text of `heapline report` given several traces: runs of one program (CI shards, many
/// machines) with their stacks matched by function and file:line. Counts and bytes are summed
/// across runs; a peak is not, since the runs peak at different moments, so each run's peak is
/// given with its trace.
struct RunsReport {
  var profile: HeapProfile
  /// How many stacks to list.
  var top: Int
  /// How many categories to list.
  var categories: Int
  /// The instant that `--at` named, in nanoseconds into each run; `nil` for their ends.
  var at: UInt64?

  func render() -> String {
    let runs = profile.runs
    let count = runs.count == 1 ? "1 run" : "\(runs.count) runs"
    var lines = ["Heapline report for \(count), stacks matched by function and line"]
    for (number, run) in runs.enumerated() {
      let when = run.peakTime.map { " at \(TimeText.duration($0))" } ?? ""
      let sampled = run.sampleMeanBytes.map {
        "; sampled every \(ByteCountText.grouped($0)) bytes on average: its totals are exact,"
          + " its live bytes usable bytes, and its stacks' and categories' figures estimates"
      }
      lines.append(
        "  Run \(number + 1): '\(run.path)', \(TimeText.duration(run.durationNanoseconds)),"
          + " peak \(Self.bytes(run.peakLiveBytes)) live\(when)\(sampled ?? "")")
    }
    if let at {
      lines.append("  Statistics as they stood at \(TimeText.duration(at)) into each run")
    }
    let stacks = profile.stacks.sorted(by: Self.ranksHigher)
    let all = Self.totals(of: profile)
    lines += [
      "", "  Allocations      \(ByteCountText.grouped(all.allocatedObjects))",
      "  Bytes allocated  \(Self.bytes(all.allocatedBytes))",
      "  Blocks live      \(ByteCountText.grouped(all.liveObjects))",
      "  Bytes live       \(Self.bytes(all.liveBytes))"
        + (runs.contains { $0.sampleMeanBytes != nil }
          ? "  (a sampled run's are usable bytes)" : ""),
      "", "Categories by bytes live:",
    ]
    var byCategory: [String: Figures] = [:]
    for sample in profile.samples { byCategory[sample.category, default: Figures()].add(sample) }
    let names = byCategory.keys.sorted { lhs, rhs in
      let (left, right) = (byCategory[lhs]!, byCategory[rhs]!)
      if left.liveBytes != right.liveBytes { return left.liveBytes > right.liveBytes }
      if left.allocatedBytes != right.allocatedBytes {
        return left.allocatedBytes > right.allocatedBytes
      }
      return lhs < rhs
    }
    for name in names.prefix(categories) {
      lines.append("  \(name): " + byCategory[name]!.sentence)
    }
    if names.count > categories { lines.append("  (\(names.count - categories) more)") }
    lines += ["", "Top \(min(top, stacks.count)) of \(stacks.count) stacks by bytes live:"]
    for (rank, stack) in stacks.prefix(top).enumerated() {
      var figures = Figures()
      figures.add(stack)
      lines.append("#\(rank + 1) " + figures.sentence)
      for frame in profile.frames(of: stack) {
        let location = profile.style.sourceLocation(frame).map { "  \($0)" } ?? ""
        lines.append("    \(profile.style.name(frame))\(location)")
      }
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// The runs' exact totals, summed: a sampled run's samples only estimate them. From the
  /// samples when a merged file written before the totals were kept holds a run.
  private static func totals(of profile: HeapProfile) -> Figures {
    let exact = profile.runs.compactMap(\.totals)
    guard exact.count == profile.runs.count else {
      return profile.samples.reduce(into: Figures()) { $0.add($1) }
    }
    return exact.reduce(into: Figures()) { all, run in
      all.allocatedObjects &+= run.allocations
      all.allocatedBytes &+= run.allocatedBytes
      all.liveObjects &+= run.liveBlocks
      all.liveBytes &+= run.liveBytes
    }
  }

  /// Bytes live, then bytes allocated, larger first.
  private static func ranksHigher(_ lhs: HeapProfile.Sample, _ rhs: HeapProfile.Sample) -> Bool {
    if lhs.liveBytes != rhs.liveBytes { return lhs.liveBytes > rhs.liveBytes }
    return lhs.allocatedBytes > rhs.allocatedBytes
  }

  private static func bytes(_ value: UInt64) -> String { ByteCountText.grouped(value) + " B" }

  /// Sums of samples' figures.
  private struct Figures {
    var allocatedObjects: UInt64 = 0
    var allocatedBytes: UInt64 = 0
    var liveObjects: UInt64 = 0
    var liveBytes: UInt64 = 0

    mutating func add(_ sample: HeapProfile.Sample) {
      allocatedObjects &+= sample.allocatedObjects
      allocatedBytes &+= sample.allocatedBytes
      liveObjects &+= sample.liveObjects
      liveBytes &+= sample.liveBytes
    }

    var sentence: String {
      "\(RunsReport.bytes(liveBytes)) live in \(Self.count(liveObjects, "block"));"
        + " \(RunsReport.bytes(allocatedBytes)) allocated in"
        + " \(Self.count(allocatedObjects, "allocation"))"
    }

    /// `1 block`, `2,048 blocks`.
    private static func count(_ value: UInt64, _ noun: String) -> String {
      ByteCountText.grouped(value) + " " + noun + (value == 1 ? "" : "s")
    }
  }
}
