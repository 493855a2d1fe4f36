/// A plain-text table whose columns are padded to their widest cell: the first column left
/// aligned, the others (numbers) right aligned unless listed in ``leftAligned``.
struct TextTable {
  var header: [String]
  var rows: [[String]] = []
  /// Spaces before each line.
  var indent = 2
  /// Columns aligned left.
  var leftAligned: Set<Int>

  /// A table with `header` as its first line; pass `[]` for a table without one.
  init(header: [String], leftAligned: Set<Int> = [0]) {
    self.header = header
    self.leftAligned = leftAligned
  }

  mutating func append(_ row: [String]) {
    rows.append(row)
  }

  /// The table's lines, header first, without trailing spaces.
  var lines: [String] {
    let all = (header.isEmpty ? [] : [header]) + rows
    let columnCount = all.map(\.count).max() ?? 0
    let widths = (0..<columnCount).map { column in
      all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
    }
    return all.map { row in
      let cells = (0..<columnCount).map { column in
        let cell = row.indices.contains(column) ? row[column] : ""
        let padding = String(repeating: " ", count: widths[column] - cell.count)
        return leftAligned.contains(column) ? cell + padding : padding + cell
      }
      let line = String(repeating: " ", count: indent) + cells.joined(separator: "  ")
      return String(line.reversed().drop { $0 == " " }.reversed())
    }
  }
}
