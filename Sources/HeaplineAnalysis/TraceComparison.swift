import HeaplineTrace

/// Persistent memory (live at the end) of two recordings side by side, by category and by
/// stack, sorted by how much it changed.
///
/// Addresses differ between runs, so stacks are matched by their symbolized frames: the
/// chain of function names (or `module+0xoffset` without symbols), which also merges the
/// call sites of one function.
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
    /// The category's name, or the stack's frame names joined by `;`, root first.
    public var key: String
    /// The stack's frames, outermost first, from whichever recording has it (B first); empty
    /// for categories.
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

  /// Compares the persistent blocks of two recordings.
  public init(
    a: StackProfile, aCategories: [CategoryStatistics], b: StackProfile,
    bCategories: [CategoryStatistics]
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
    for (profile, isB) in [(a, false), (b, true)] {
      for entry in profile.entries where entry.statistics.liveBlocks > 0 {
        let frames = profile.frames(of: entry)
        let names =
          frames.isEmpty ? [FoldedStacks.unknownFrame] : frames.map { FoldedStacks.frameName($0) }
        let key = names.joined(separator: ";")
        var row = stackRows[key] ?? Row(key: key, frames: frames)
        if isB {
          row.bytesB &+= entry.statistics.liveBytes
          row.countB &+= entry.statistics.liveBlocks
          row.frames = frames
        } else {
          row.bytesA &+= entry.statistics.liveBytes
          row.countA &+= entry.statistics.liveBlocks
        }
        stackRows[key] = row
      }
    }
    categories = categoryRows.values.sorted(by: Self.changesMore)
    stacks = stackRows.values.sorted(by: Self.changesMore)
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
