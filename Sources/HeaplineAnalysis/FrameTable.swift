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

  /// The places, of `places` (innermost first), of the frames a report shows, from the
  /// traits of the frame at each place.
  static func shown(
    _ places: [Int], traits: (Int) -> FrameStyle.Traits, style: FrameStyle
  ) -> [Int] {
    let shown = style.shownIndexes(places.map(traits))
    guard !shown.isEmpty else { return places }
    return shown.map { places[$0] }
  }

  private mutating func place(of pc: UInt64) -> Range<Int> {
    if let known = placeOfPC[pc] { return known }
    let start = frames.count
    frames += symbols[pc] ?? [SymbolizedFrame(pc: pc)]
    placeOfPC[pc] = start..<frames.count
    return start..<frames.count
  }
}
