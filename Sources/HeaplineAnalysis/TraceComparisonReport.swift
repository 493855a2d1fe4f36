import HeaplineTrace

extension TraceComparison {
  /// The human-readable comparison: every category, and the `stackLimit` stacks that changed
  /// most (all for `nil`), frames innermost first, written in `style`; `notes` follow the
  /// header, one line each (which figures are estimates).
  public func text(
    pathA: String, pathB: String, stackLimit: Int?, style: FrameStyle = FrameStyle(),
    notes: [String] = []
  ) -> String {
    var lines = ["Persistent memory at exit: A = '\(pathA)', B = '\(pathB)'"]
    lines += notes.map { "  " + $0 }
    let total = categories.reduce(into: Row(key: "", frames: [])) { sum, row in
      sum.bytesA &+= row.bytesA
      sum.countA &+= row.countA
      sum.bytesB &+= row.bytesB
      sum.countB &+= row.countB
    }
    lines.append(
      "  A: \(FrameLines.bytesInBlocks(total.bytesA, total.countA)); "
        + "B: \(FrameLines.bytesInBlocks(total.bytesB, total.countB)); "
        + "Δ \(FrameLines.signed(total.deltaBytes)) B, \(FrameLines.signed(total.deltaCount)) blocks"
    )
    lines += ["", "By category, largest change first"]
    if categories.isEmpty {
      lines.append("  (none)")
    } else {
      var table = TextTable(header: [
        "Category", "Bytes A", "Blocks A", "Bytes B", "Blocks B", "Δ Bytes", "Δ Blocks",
      ])
      for row in categories {
        table.append([
          row.key, ByteCountText.grouped(row.bytesA), ByteCountText.grouped(row.countA),
          ByteCountText.grouped(row.bytesB), ByteCountText.grouped(row.countB),
          FrameLines.signed(row.deltaBytes), FrameLines.signed(row.deltaCount),
        ])
      }
      lines += table.lines
    }
    let shown = stacks.prefix(stackLimit ?? .max)
    lines += [
      "", "By stack: top \(shown.count) of \(stacks.count), largest change first",
      "  (matched by function and module, so that a function's call sites are summed; each",
      "  shown at one of them, as B recorded it when B has it)",
    ]
    for (rank, row) in shown.enumerated() {
      lines.append(
        "  [\(rank + 1)] Δ \(FrameLines.signed(row.deltaBytes)) B, "
          + "\(FrameLines.signed(row.deltaCount)) blocks (A: "
          + FrameLines.bytesInBlocks(row.bytesA, row.countA) + "; B: "
          + FrameLines.bytesInBlocks(row.bytesB, row.countB) + ")")
      lines += FrameLines.lines(row.frames.reversed(), style: style)
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// RFC 4180 CSV: `group,name,bytes_a,count_a,bytes_b,count_b,delta_bytes,delta_count`,
  /// categories then stacks, each largest change first.
  public func csv() -> String {
    var text = CSV.record([
      "group", "name", "bytes_a", "count_a", "bytes_b", "count_b", "delta_bytes", "delta_count",
    ])
    for (group, rows) in [("category", categories), ("stack", stacks)] {
      for row in rows {
        text += CSV.record([
          group, row.key, String(row.bytesA), String(row.countA), String(row.bytesB),
          String(row.countB), String(row.deltaBytes), String(row.deltaCount),
        ])
      }
    }
    return text
  }
}
