import HeaplineTrace

/// The page's frames: a table of distinct frames, each stored once, that stacks and leak
/// groups refer to by index.
///
/// ``describe(_:)`` is the one place where the page turns a symbolized frame into text, so
/// that the page takes up a more readable form of names by changing it alone.
struct HTMLPageFrames {
  let style: FrameStyle
  private var indices: [[String]: Int] = [:]
  private(set) var rows: [[String]] = []

  init(style: FrameStyle) { self.style = style }

  /// The function, the module's file name and the source location that the page shows for
  /// `frame`, in the style's form; an inlined frame says so after its function.
  func describe(_ frame: SymbolizedFrame) -> [String] {
    [
      style.name(frame) + (frame.isInlined ? " [inlined]" : ""), frame.moduleName ?? "",
      style.sourceLocation(frame) ?? "",
    ]
  }

  /// The indices of the frames of `stack` that the style shows (the user's, by default:
  /// neither the allocator's nor those below `main`), innermost first.
  mutating func indices(of stack: [SymbolizedFrame]) -> JSONValue {
    .array(style.shownFrames(stack).map { .signed(index(of: $0)) })
  }

  /// The index of `frame` in the table, adding it on first sight.
  private mutating func index(of frame: SymbolizedFrame) -> Int {
    let row = describe(frame)
    if let index = indices[row] { return index }
    indices[row] = rows.count
    rows.append(row)
    return rows.count - 1
  }

  /// The table as JSON: one `[function, module, location]` array per frame.
  var json: JSONValue {
    .array(rows.map { row in .array(row.map { .string($0) }) })
  }
}
