import HeaplineTrace

/// The machine-readable report: a JSON object with a `schema_version`, snake_case keys and
/// exact integers, documented in <doc:ReportJSON>.
public struct JSONReportRenderer: ReportRenderer {
  /// The version of the schema this renderer writes. Bump it when a key changes meaning or
  /// disappears; adding keys does not need a bump.
  public static let schemaVersion: UInt64 = 1

  /// How frame names are written; JSON keeps every frame and every path as recorded, so only
  /// ``FrameStyle/fullNames`` applies.
  public var style: FrameStyle

  /// Creates a JSON renderer that names frames in `style`.
  public init(style: FrameStyle = FrameStyle()) {
    self.style = style
  }

  public func render(_ report: StatisticsReport) throws -> String {
    var output = StringOutput()
    try write(report, to: &output)
    return output.text
  }

  /// Writes the report to `output` as ``render(_:)`` formats it, one top stack at a time, so
  /// that memory does not grow with the number of stacks shown.
  public func write(_ report: StatisticsReport, to output: inout some TextOutput)
    throws(AnalysisError)
  {
    try Self.document(report, style: style).write(to: &output)
    try output.write("\n")
  }

  private static func document(_ report: StatisticsReport, style: FrameStyle) -> JSONValue {
    let statistics = report.statistics
    let frames = StackFrames(report, style: style)
    return JSONValue.object(
      [
        ("schema_version", .unsigned(Self.schemaVersion)),
        ("trace", Self.trace(statistics.trace)),
        ("totals", Self.totals(statistics.totals)),
        ("categories", .array(statistics.categories.map(Self.category))),
        ("stack_grouping", .string(report.grouping.rawValue)),
        ("stack_count", .unsigned(UInt64(statistics.stackCount))),
        (
          "top_stacks",
          .lazyArray(count: statistics.topStacks.count) { index in
            let stack = statistics.topStacks[index]
            return Self.stack(
              stack, rank: index + 1, frames: frames.json(of: stack),
              mergedStacks: report.mergedStackCounts[stack.id])
          }
        ),
      ] + Self.sampling(statistics.sampleWeight) + Self.memoryMembers(report, frames: frames))
  }

  /// Nothing for a full trace; for a sampled one, a `sampling` member that says which figures
  /// are estimates.
  private static func sampling(_ weight: SampleWeight?) -> [(String, JSONValue)] {
    guard let weight else { return [] }
    let sampling = JSONValue.object([
      ("mean_bytes", .unsigned(weight.meanBytes)),
      ("exact", .array([.string("totals")])),
      ("estimated", .array([.string("categories"), .string("top_stacks")])),
      ("live_bytes_are_usable_bytes", .bool(true)),
    ])
    return [("sampling", sampling)]
  }

  private static func trace(_ trace: TraceSummary) -> JSONValue {
    .object([
      ("path", .string(trace.path)),
      ("pid", .unsigned(UInt64(trace.pid))),
      ("recorded_in_process", .bool(trace.isRecordedInProcess)),
      ("start_realtime_ns", .unsigned(trace.startRealtimeNanoseconds)),
      ("duration_ns", .unsigned(trace.durationNanoseconds)),
      ("is_complete", .bool(trace.isComplete)),
      ("last_complete_chunk_offset", .unsigned(trace.lastCompleteChunkOffset)),
      ("end_time_ns", .unsigned(trace.endTime)),
      ("end_reason", .string(trace.endReason.map(endReasonName))),
      ("exit_status", .unsigned(trace.exitStatus)),
      ("recovered_chunks", .unsigned(trace.trailer.map { UInt64($0.recoveredChunkCount) })),
      ("cut_short_offset", .unsigned(trace.cutShort?.offset)),
      ("cut_short_bytes", .unsigned(trace.cutShort?.bytes)),
      ("lost_events", lostEvents(trace.lostEvents)),
    ])
  }

  private static func lostEvents(_ lost: LostEvents) -> JSONValue {
    .object([
      ("total", .unsigned(lost.total)),
      (
        "by_reason",
        .array(
          lost.byReason.sorted { $0.key.rawValue < $1.key.rawValue }.map { reason, count in
            .object([
              ("reason", .unsigned(UInt64(reason.rawValue))),
              ("description", .string(reason.description)), ("count", .unsigned(count)),
            ])
          })
      ),
    ])
  }

  private static func totals(_ totals: AllocationTotals) -> JSONValue {
    .object([
      ("allocations", .unsigned(totals.allocationCount)),
      ("frees", .unsigned(totals.freeCount)),
      ("unmatched_frees", .unsigned(totals.unmatchedFreeCount)),
      ("carried_over_blocks", .unsigned(totals.carriedOverBlocks)),
      ("carried_over_bytes", .unsigned(totals.carriedOverBytes)),
      ("allocated_bytes", .unsigned(totals.allocatedBytes)),
      ("freed_bytes", .unsigned(totals.freedBytes)),
      ("peak_live_bytes", .unsigned(totals.peakLiveBytes)),
      ("peak_live_blocks", .unsigned(totals.peakLiveBlocks)),
      ("peak_time_ns", .unsigned(totals.peakTime)),
      ("live_bytes", .unsigned(totals.liveBytes)),
      ("live_blocks", .unsigned(totals.liveBlocks)),
      ("marks", .unsigned(totals.markCount)),
      ("rss_samples", .unsigned(totals.rssSampleCount)),
      ("peak_rss_bytes", .unsigned(totals.peakRSSBytes)),
      ("last_rss_bytes", .unsigned(totals.lastRSSBytes)),
    ])
  }

  private static func category(_ category: CategoryStatistics) -> JSONValue {
    .object([
      ("id", .unsigned(category.id.rawValue)),
      ("name", .string(category.name)),
      ("kind", .string(category.kind.description)),
      ("persistent_bytes", .unsigned(category.persistentBytes)),
      ("persistent_count", .unsigned(category.persistentCount)),
      ("transient_count", .unsigned(category.transientCount)),
      ("total_bytes", .unsigned(category.totalBytes)),
      ("total_count", .unsigned(category.totalCount)),
      ("bytes_at_peak", .unsigned(category.bytesAtPeak)),
    ])
  }

  static func stack(
    _ stack: StackStatistics, rank: Int, frames: JSONValue, mergedStacks: Int? = nil
  ) -> JSONValue {
    .object([
      ("rank", .signed(rank)),
      ("stack_id", .unsigned(stack.id.rawValue)),
      ("bytes_at_peak", .unsigned(stack.bytesAtPeak)),
      ("live_bytes", .unsigned(stack.liveBytes)),
      ("live_blocks", .unsigned(stack.liveBlocks)),
      ("allocations", .unsigned(stack.allocationCount)),
      ("total_bytes", .unsigned(stack.totalBytes)),
      ("temporary_allocations", .unsigned(stack.temporaryCount)),
      ("merged_stacks", .unsigned(mergedStacks.map(UInt64.init))),
      ("frames", frames),
    ])
  }

  /// A stack's frames as <doc:ReportJSON> lays them out, every one of them, each with its
  /// ``FrameRole`` in `hidden` (`null` for the frames a text stack shows); the leak report's
  /// stacks use it too.
  static func frames(_ frames: [SymbolizedFrame], style: FrameStyle) -> JSONValue {
    .array(
      zip(frames, FrameRole.roles(of: frames)).map { frame($0, role: $1, name: style.name($0)) })
  }

  fileprivate static func frame(_ frame: SymbolizedFrame, role: FrameRole, name: String)
    -> JSONValue
  {
    .object([
      ("pc", .address(frame.pc)),
      ("function", .string(frame.function)),
      ("display_name", .string(name)),
      ("hidden", .string(role == .user ? nil : role.rawValue)),
      ("file", .string(frame.file)),
      ("line", .signed(frame.line)),
      ("column", .signed(frame.column)),
      ("module", .string(frame.modulePath)),
      ("module_address", .address(frame.moduleAddress)),
      ("inlined", .bool(frame.isInlined)),
    ])
  }

  private static func endReasonName(_ reason: TraceTrailer.EndReason) -> String {
    switch reason {
    case .exited: "exited"
    case .stopped: "stopped"
    case .writeFailed: "write_failed"
    case .memoryLimit: "memory_limit"
    case .endedUnfinished: "ended_unfinished"
    case .exec: "exec"
    case .rotated: "rotated"
    case .seccomp: "seccomp"
    default: "reason_\(reason.rawValue)"
    }
  }
}

extension JSONReportRenderer {
  /// A report's frames as its stacks' JSON needs them (``ExpandedFrames``). Each frame's JSON
  /// is made once for each role it has in some stack (a ``JSONFragment``), not once per stack;
  /// the first ``keptFragments`` are kept, so that memory does not grow with the stacks shown
  /// (a few thousand frames, those of the highest stacks, are most of every stack's).
  struct StackFrames {
    private let expanded: ExpandedFrames
    private let made = Made()

    /// A frame by its return address, its place among the frames there (the function, then
    /// those inlined into it) and its role in the stack.
    private struct Key: Hashable {
      var pc: UInt64
      var place: Int
      var role: FrameRole
    }

    static let keptFragments = 4096

    private final class Made {
      var fragments: [Key: JSONFragment] = [:]

      func add(_ key: Key, _ frame: (frame: SymbolizedFrame, name: String?)) -> JSONFragment {
        let fragment = JSONFragment(
          JSONReportRenderer.frame(frame.frame, role: key.role, name: frame.name ?? ""))
        if fragments.count < StackFrames.keptFragments { fragments[key] = fragment }
        return fragment
      }
    }

    init(_ report: StatisticsReport, style: FrameStyle) {
      expanded = ExpandedFrames(report.symbols, name: style.name)
    }

    /// The JSON of `stack`'s frames (``JSONReportRenderer/frames(_:style:)``).
    func json(of stack: StackStatistics) -> JSONValue {
      var traits: [FrameRole.Traits] = []
      let counts = stack.frames.map { expanded.appendTraits(at: $0, to: &traits) }
      let roles = FrameRole.roles(traits: traits)
      var elements: [JSONValue] = []
      elements.reserveCapacity(roles.count)
      for (pc, count) in zip(stack.frames, counts) {
        for place in 0..<count {
          let key = Key(pc: pc, place: place, role: roles[elements.count])
          let fragment = made.fragments[key] ?? made.add(key, expanded.frame(at: pc, place: place))
          elements.append(.fragment(fragment))
        }
      }
      return .array(elements)
    }
  }
}
