import HeaplineTrace

/// One leak, or several identical ones: a root leak, a leaked cycle, or possibly lost blocks,
/// with what hangs from it.
public struct LeakGroup: Hashable, Sendable {
  /// What kind of leak a group is.
  public enum Kind: String, Hashable, Sendable {
    /// A block that nothing points to, and what only it holds.
    case rootLeak = "root"
    /// Blocks that point to each other in a cycle that nothing points into (the usual Swift
    /// leak: a closure that captures `self` strongly, held by an object that `self` owns).
    case cycle
    /// Blocks the program points into, but never to their start.
    case possiblyLost = "possible"
  }

  public var kind: Kind
  /// For a cycle, its categories in pointer order back to the first, `A → B → closure context
  /// → A`; otherwise the category of the block the leak starts at.
  public var name: String
  /// How many identical leaks the group stands for.
  public var instances: Int
  /// The blocks the leak starts at (a cycle's, in the order of ``name``), of its first instance:
  /// the first 256 of them.
  public var members: [LeakGroupMember]
  /// The starting blocks of the first instance past ``members`` (a lost ring of millions of
  /// blocks starts at every one of them).
  public var membersLeftOut = 0
  /// Blocks and bytes, over every instance.
  public var definitelyLost = LeakAmount()
  public var indirectlyLost = LeakAmount()
  public var possiblyLost = LeakAmount()
  /// The suppression that matched one of the members' stacks, as written in its file.
  public var suppressedBy: String?

  /// All of the group's blocks and bytes.
  public var total: LeakAmount {
    var sum = definitelyLost
    sum.add(indirectlyLost)
    sum.add(possiblyLost)
    return sum
  }
}

/// A block a leak starts at: its category, size and allocation stack.
public struct LeakGroupMember: Hashable, Sendable {
  public var id: AllocID
  public var address: Address
  public var size: UInt64
  public var category: CategoryInfo
  public var stack: StackID
  /// The allocation stack, symbolized, innermost first (inlined functions expanded).
  public var frames: [SymbolizedFrame] = []

  /// The category's name without its module (``CategoryInfo/shortName``).
  public var shortName: String { category.shortName }
}
