import HeaplineAnalysis
import HeaplineTrace

/// What a pprof heap profile says, before it is encoded: Go's four heap figures per stack and
/// category, with the frames as the report shows them. One trace makes one; the profiles of
/// several runs of a program merge into one, stack by stack.
///
/// Each distinct frame is stored once, in ``frames``, and a sample names its frames by their
/// places there, as in ``StackProfile``.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace", options: HeapProfile.statisticsOptions())
/// let profile = HeapProfile(statistics: stats, symbolizer: Symbolizer(), style: FrameStyle())
/// let bytes = try PprofEncoder.gzipped(profile)
/// ```
public struct HeapProfile: Sendable {
  /// One stack's blocks of one category.
  public struct Sample: Hashable, Sendable {
    /// The frames that the report shows, innermost first, inlined functions before the
    /// function they were inlined into: indices into ``HeapProfile/frames``.
    public var frames: [Int]
    /// The category's name, `Malloc 48 Bytes` or a Swift type.
    public var category: String
    /// Allocations made (pprof's `alloc_objects`).
    public var allocatedObjects: UInt64
    /// Bytes allocated (`alloc_space`).
    public var allocatedBytes: UInt64
    /// Blocks live at the end, or at the instant asked for (`inuse_objects`).
    public var liveObjects: UInt64
    /// Bytes live then (`inuse_space`).
    public var liveBytes: UInt64
    /// Which of ``HeapProfile/runs`` the frames' addresses belong to.
    public var run: Int
  }

  /// One recording that the profile is made of.
  public struct Run: Sendable {
    /// The trace file.
    public var path: String
    /// Its module map, which the frames' addresses refer to.
    public var modules: [TraceModule]
    /// When the recording started, in nanoseconds since the Unix epoch.
    public var startNanoseconds: UInt64
    /// How much of it the profile covers, in nanoseconds.
    public var durationNanoseconds: UInt64
    /// Its peak of live bytes.
    public var peakLiveBytes: UInt64
    /// When that peak was, in nanoseconds since its start; `nil` without allocations.
    public var peakTime: UInt64?
    /// The mean bytes between samples when the run was recorded with `--sample-bytes`: its
    /// samples' figures are then estimates. `nil` for a full recording.
    public var sampleMeanBytes: UInt64? = nil
    /// Its exact totals, which a sampled run's samples only estimate; `nil` in a merged file
    /// written before they were kept.
    public var totals: Totals? = nil
  }

  /// A run's exact totals: its allocations, and its blocks live at its end (or at `--at`).
  public struct Totals: Sendable, Codable, Equatable {
    public var allocations: UInt64
    public var allocatedBytes: UInt64
    public var liveBlocks: UInt64
    public var liveBytes: UInt64

    public init(allocations: UInt64, allocatedBytes: UInt64, liveBlocks: UInt64, liveBytes: UInt64)
    {
      self.allocations = allocations
      self.allocatedBytes = allocatedBytes
      self.liveBlocks = liveBlocks
      self.liveBytes = liveBytes
    }
  }

  /// The samples: one per stack and category.
  public var samples: [Sample]
  /// The frames that samples name, each once.
  public var frames: [SymbolizedFrame]
  /// The recordings, in the order given.
  public var runs: [Run]
  /// How functions and files are named: as in the report.
  public var style: FrameStyle

  /// A profile of these samples, whose frames are indices into `frames`, and runs.
  public init(samples: [Sample], frames: [SymbolizedFrame], runs: [Run], style: FrameStyle) {
    precondition(
      samples.allSatisfy { $0.frames.allSatisfy(frames.indices.contains) },
      "a sample names a frame that is not there")
    self.samples = samples
    self.frames = frames
    self.runs = runs
    self.style = style
  }

  /// The frames of `sample`, innermost first.
  public func frames(of sample: Sample) -> [SymbolizedFrame] { sample.frames.map { frames[$0] } }

  /// What ``init(statistics:symbolizer:style:)`` needs: every stack, each category apart, up
  /// to `endTime` nanoseconds into the trace (`nil` for the whole trace).
  public static func statisticsOptions(endTime: UInt64? = nil) -> StatisticsOptions {
    var options = StackProfile.statisticsOptions
    options.endTime = endTime
    options.splitsStacksByCategory = true
    return options
  }

  /// The profile of one trace, from statistics made with ``statisticsOptions(endTime:)``;
  /// `symbolizer` names the frames (`nil` for module offsets only), and `style` chooses the
  /// names and which frames show, as in the report.
  public init(statistics: Statistics, symbolizer: Symbolizer?, style: FrameStyle) {
    let stacks = StackProfile(
      statistics: statistics, keeping: { $0.allocationCount > 0 || $0.liveBlocks > 0 },
      symbolizer: symbolizer)
    let names = Dictionary(
      statistics.categories.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
    let shown = stacks.shownFrames(style: style)
    samples = stacks.entries.map { entry in
      let figures = entry.statistics
      return Sample(
        frames: shown.of(entry),
        category: figures.category.flatMap { names[$0] } ?? "",
        allocatedObjects: figures.allocationCount, allocatedBytes: figures.totalBytes,
        liveObjects: figures.liveBlocks, liveBytes: figures.liveBytes, run: 0)
    }
    frames = stacks.frames
    self.style = style
    let trace = statistics.trace
    runs = [
      Run(
        path: trace.path, modules: statistics.modules,
        startNanoseconds: trace.startRealtimeNanoseconds,
        durationNanoseconds: trace.durationNanoseconds,
        peakLiveBytes: statistics.totals.peakLiveBytes, peakTime: statistics.totals.peakTime,
        sampleMeanBytes: statistics.sampleWeight?.meanBytes,
        totals: Totals(
          allocations: statistics.totals.allocationCount,
          allocatedBytes: statistics.totals.allocatedBytes,
          liveBlocks: statistics.totals.liveBlocks, liveBytes: statistics.totals.liveBytes))
    ]
  }
}
