import HeaplineTrace

/// Each return address's frames (the function there and those inlined into it) with their
/// roles' traits and, when asked, their display names, found once for all the stacks that hold
/// the address. A trace's many stacks share a few thousand addresses, and matching each
/// frame's names against the allocator's and the runtime's, stack after stack, was most of
/// the time of the passes that write every stack.
struct ExpandedFrames {
  private let known: [UInt64: Expanded]
  private let name: ((SymbolizedFrame) -> String)?
  /// Every known address's traits in one array, and where each address's run of them lies:
  /// read for every frame of every stack without a copy of an ``Expanded``.
  private let traitRuns: [UInt64: Range<Int>]
  private let allTraits: [FrameRole.Traits]

  /// The frames, traits and names of one address, or of a whole stack, innermost first.
  struct Expanded {
    var frames: [SymbolizedFrame] = []
    var traits: [FrameRole.Traits] = []
    /// Empty unless names were asked for.
    var names: [String] = []

    /// The first frame a readable stack shows (``FrameRole/firstUserFrame(_:)``).
    var firstUserFrame: SymbolizedFrame? {
      FrameRole.firstUserIndex(traits: traits).map { frames[$0] }
    }

    fileprivate init() {}

    fileprivate init(_ frames: [SymbolizedFrame], name: ((SymbolizedFrame) -> String)?) {
      self.frames = frames
      traits = frames.map(FrameRole.Traits.init)
      names = name.map { frames.map($0) } ?? []
    }

    fileprivate mutating func append(_ other: Expanded) {
      frames += other.frames
      traits += other.traits
      names += other.names
    }
  }

  /// The frames `symbols` gives each address (an address without any stands for itself),
  /// named by `name` when it is given.
  init(_ symbols: [UInt64: [SymbolizedFrame]], name: ((SymbolizedFrame) -> String)? = nil) {
    self.name = name
    known = symbols.mapValues { Expanded($0, name: name) }
    var runs: [UInt64: Range<Int>] = [:]
    var traits: [FrameRole.Traits] = []
    for (pc, expanded) in known {
      runs[pc] = traits.count..<(traits.count + expanded.traits.count)
      traits += expanded.traits
    }
    traitRuns = runs
    allTraits = traits
  }

  /// Appends the traits of the frames `pc` expands to (the function there and those inlined
  /// into it) to `traits`, and returns how many there are.
  func appendTraits(at pc: UInt64, to traits: inout [FrameRole.Traits]) -> Int {
    guard let run = traitRuns[pc] else {
      traits.append(FrameRole.Traits(SymbolizedFrame(pc: pc)))
      return 1
    }
    traits += allTraits[run]
    return run.count
  }

  /// The frame at `place` among those `pc` expands to, and its name when names were asked for.
  func frame(at pc: UInt64, place: Int) -> (frame: SymbolizedFrame, name: String?) {
    let expanded = known[pc] ?? Expanded([SymbolizedFrame(pc: pc)], name: name)
    return (expanded.frames[place], expanded.names.isEmpty ? nil : expanded.names[place])
  }

  /// A stack's frames, from its return addresses, innermost first.
  func expand(_ pcs: [UInt64]) -> Expanded {
    var stack = Expanded()
    for pc in pcs { stack.append(known[pc] ?? Expanded([SymbolizedFrame(pc: pc)], name: name)) }
    return stack
  }
}
