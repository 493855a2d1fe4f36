import HeaplineTrace

/// The page's frames: a table of distinct frames, each stored once, that stacks and leak
/// groups refer to by index.
///
/// ``describe(_:)`` is the one place where the page turns a symbolized frame into text, so
/// that the page takes up a more readable form of names by changing it alone.
struct HTMLPageFrames {
  private var indices: [[String]: Int] = [:]
  private(set) var rows: [[String]] = []

  /// The function, the module's file name and the source location that the page shows for
  /// `frame`; an inlined frame says so after its function.
  static func describe(_ frame: SymbolizedFrame) -> [String] {
    [
      frame.displayName + (frame.isInlined ? " [inlined]" : ""), frame.moduleName ?? "",
      frame.sourceLocation ?? "",
    ]
  }

  /// The index of `frame` in the table, adding it on first sight.
  mutating func index(of frame: SymbolizedFrame) -> Int {
    let row = Self.describe(frame)
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
