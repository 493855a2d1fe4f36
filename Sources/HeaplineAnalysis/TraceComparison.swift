import HeaplineTrace

/// Persistent memory (live at the end) of two recordings side by side, by category and by
/// stack, sorted by how much it changed.
///
/// Addresses differ between runs, so stacks are matched by their symbolized frames: the
/// chain of the frames a style shows, each its function and module (or `module+0xoffset`
/// without symbols), which also merges the call sites of one function, and keeps apart two
/// programs' functions of one name.
///
/// ```swift
/// let comparison = TraceComparison(
///   a: StackProfile(statistics: statsA, weights: [.live], symbolizer: symbolizer),
///   aCategories: statsA.categories,
///   b: StackProfile(statistics: statsB, weights: [.live], symbolizer: symbolizer),
///   bCategories: statsB.categories)
/// comparison.categories.first?.deltaBytes   // +12_000
/// ```
public struct TraceComparison: Sendable {
  /// One category or stack in both recordings.
  public struct Row: Hashable, Sendable {
    /// The category's name, or the stack's shown frames joined by `;`, root first, each its
    /// function and `(module)`.
    public var key: String
    /// The stack's frames, outermost first, from whichever recording has it (B first); empty
    /// for categories, and for stacks past those whose frames were asked for.
    public var frames: [SymbolizedFrame]
    /// Persistent bytes in A.
    public var bytesA: UInt64 = 0
    /// Persistent blocks in A.
    public var countA: UInt64 = 0
    /// Persistent bytes in B.
    public var bytesB: UInt64 = 0
    /// Persistent blocks in B.
    public var countB: UInt64 = 0

    /// B's bytes less A's.
    public var deltaBytes: Int64 { Int64(clamping: bytesB) - Int64(clamping: bytesA) }
    /// B's blocks less A's.
    public var deltaCount: Int64 { Int64(clamping: countB) - Int64(clamping: countA) }
  }

  /// Categories with persistent blocks in either recording, largest change first.
  public var categories: [Row]
  /// Stacks with persistent blocks in either recording, largest change first.
  public var stacks: [Row]

  /// Compares the persistent blocks of two recordings, matching stacks by the frames that
  /// `style` shows. Only the first `framesKept` stacks (all for `nil`) keep their frames: a
  /// row's frames, held for every stack of two large traces, took most of the memory.
  public init(
    a: StackProfile, aCategories: [CategoryStatistics], b: StackProfile,
    bCategories: [CategoryStatistics], style: FrameStyle = FrameStyle(), framesKept: Int? = nil
  ) {
    var categoryRows: [String: Row] = [:]
    for category in aCategories where category.persistentCount > 0 {
      categoryRows[category.name, default: Row(key: category.name, frames: [])].bytesA &+=
        category.persistentBytes
      categoryRows[category.name]!.countA &+= category.persistentCount
    }
    for category in bCategories where category.persistentCount > 0 {
      categoryRows[category.name, default: Row(key: category.name, frames: [])].bytesB &+=
        category.persistentBytes
      categoryRows[category.name]!.countB &+= category.persistentCount
    }
    var stackRows: [String: Row] = [:]
    var source: [String: (profile: StackProfile, entry: StackProfile.Entry)] = [:]
    for (profile, isB) in [(a, false), (b, true)] {
      let shown = profile.shownFrames(style: style)
      let names = profile.frames.map(Self.matchName)
      for entry in profile.entries where entry.statistics.liveBlocks > 0 {
        let places = shown.of(entry)
        let key =
          places.isEmpty
          ? FoldedStacks.unknownFrame : places.reversed().map { names[$0] }.joined(separator: ";")
        var row = stackRows[key] ?? Row(key: key, frames: [])
        if isB {
          row.bytesB &+= entry.statistics.liveBytes
          row.countB &+= entry.statistics.liveBlocks
        } else {
          row.bytesA &+= entry.statistics.liveBytes
          row.countA &+= entry.statistics.liveBlocks
        }
        if isB || source[key] == nil { source[key] = (profile, entry) }
        stackRows[key] = row
      }
    }
    categories = categoryRows.values.sorted(by: Self.changesMore)
    stacks = stackRows.values.sorted(by: Self.changesMore)
    for index in stacks.indices.prefix(framesKept ?? .max) {
      let (profile, entry) = source[stacks[index].key]!
      stacks[index].frames = profile.frames(of: entry)
    }
  }

  /// What matches a frame: its function and module, or `module+0xoffset` without a name.
  private static func matchName(_ frame: SymbolizedFrame) -> String {
    let name = FoldedStacks.frameName(frame)
    guard frame.function != nil, let module = frame.moduleName else { return name }
    return name + " (" + module + ")"
  }

  /// Larger |Δ bytes| first, then larger |Δ blocks|, then by key.
  private static func changesMore(_ lhs: Row, _ rhs: Row) -> Bool {
    let left = lhs.deltaBytes.magnitude
    let right = rhs.deltaBytes.magnitude
    if left != right { return left > right }
    if lhs.deltaCount.magnitude != rhs.deltaCount.magnitude {
      return lhs.deltaCount.magnitude > rhs.deltaCount.magnitude
    }
    return lhs.key < rhs.key
  }
}
