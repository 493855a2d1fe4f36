import HeaplineTrace

/// The frames of a trace's stacks, each stored once: a return address's frames (the function
/// there and those inlined into it) take adjacent places the first time a stack holds it.
/// Tens of thousands of stacks, each some tens of frames deep, share most of their frames, and
/// a frame is some 150 bytes of names and places.
struct FrameTable {
  private let symbols: [UInt64: [SymbolizedFrame]]
  private var placeOfPC: [UInt64: Range<Int>] = [:]
  /// The frames, in the order their addresses were first met.
  private(set) var frames: [SymbolizedFrame] = []

  /// A table for the frames `symbols` gives each return address; an address without any
  /// stands for itself.
  init(symbols: [UInt64: [SymbolizedFrame]]) { self.symbols = symbols }

  /// The places of a stack's frames, innermost first, from its return addresses, innermost
  /// first.
  mutating func places(of pcs: [UInt64]) -> [Int] {
    var places: [Int] = []
    for pc in pcs { places += place(of: pc) }
    return places
  }

  /// The places, of `places` in `frames` (innermost first), of the frames a report shows.
  static func shown(_ places: [Int], of frames: [SymbolizedFrame], style: FrameStyle) -> [Int] {
    let all = places.map { frames[$0] }
    let shown = style.shownFrames(all)
    guard !shown.isEmpty else { return places }
    // The shown frames are some of all of them, in order: match them back to their places.
    var kept: [Int] = []
    kept.reserveCapacity(shown.count)
    var next = 0
    for (index, frame) in all.enumerated() where next < shown.count && frame == shown[next] {
      kept.append(places[index])
      next += 1
    }
    precondition(next == shown.count, "the shown frames are a subsequence of the stack's")
    return kept
  }

  private mutating func place(of pc: UInt64) -> Range<Int> {
    if let known = placeOfPC[pc] { return known }
    let start = frames.count
    frames += symbols[pc] ?? [SymbolizedFrame(pc: pc)]
    placeOfPC[pc] = start..<frames.count
    return start..<frames.count
  }
}
