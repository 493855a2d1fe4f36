import HeaplineTrace

/// A ``Growth`` with the frames of its stacks symbolized, rendered as text or CSV: what
/// `heapline diff FILE --from A --to B` prints.
///
/// ```swift
/// let report = GrowthReport(growth: growth, symbolizer: Symbolizer(), stackLimit: 10)
/// print(report.text(path: "app.trace"))
/// ```
public struct GrowthReport: Sendable {
  /// The figures.
  public var growth: Growth
  /// How many stacks are symbolized and shown; `nil` for all.
  public var stackLimit: Int?
  /// Symbolized frames of the return addresses of the stacks shown.
  public var symbols: [UInt64: [SymbolizedFrame]]

  /// Symbolizes the first `stackLimit` stacks (all for `nil`) in one run of `symbolizer`.
  public init(growth: Growth, symbolizer: Symbolizer?, stackLimit: Int?) {
    self.growth = growth
    self.stackLimit = stackLimit
    let pcs = growth.stacks.prefix(stackLimit ?? .max).flatMap(\.frames)
    symbols = (symbolizer ?? Symbolizer(toolPath: nil)).symbolize(pcs, modules: growth.modules)
  }

  /// The frames of `stack`, innermost first, with inlined functions expanded.
  public func frames(of stack: StackGrowth) -> [SymbolizedFrame] {
    stack.frames.flatMap { pc in symbols[pc] ?? [SymbolizedFrame(pc: pc)] }
  }

  /// The human-readable report, frames written in `style`.
  public func text(path: String, style: FrameStyle = FrameStyle()) -> String {
    let from = Self.describe(growth.from, growth.fromTime)
    let to = Self.describe(growth.to, growth.toTime)
    var lines = ["Growth in '\(path)' from \(from) to \(to)"]
    lines.append(
      "  Allocated after \(Self.name(growth.from)) and still live at \(Self.name(growth.to)): "
        + FrameLines.bytesInBlocks(growth.bytes, growth.count))
    lines += ["", "By category"]
    if growth.categories.isEmpty {
      lines.append("  (none)")
    } else {
      var table = TextTable(header: ["Category", "Bytes", "Blocks"])
      for category in growth.categories {
        table.append([
          category.name, ByteCountText.grouped(category.bytes),
          ByteCountText.grouped(category.count),
        ])
      }
      lines += table.lines
    }
    let shown = growth.stacks.prefix(stackLimit ?? .max)
    lines += ["", "By stack: top \(shown.count) of \(growth.stacks.count)"]
    for (rank, stack) in shown.enumerated() {
      lines.append("  [\(rank + 1)] " + FrameLines.bytesInBlocks(stack.bytes, stack.count))
      lines += FrameLines.lines(frames(of: stack), style: style)
    }
    return lines.joined(separator: "\n") + "\n"
  }

  /// RFC 4180 CSV: `group,name,count,bytes`, categories then stacks; a stack's name is the
  /// frames that `style` shows, from the root, each with its source line, separated by `;`: with
  /// the allocator's and the C runtime's frames and no lines, stacks that the text tells apart
  /// had one name (a tester).
  public func csv(style: FrameStyle = FrameStyle()) -> String {
    var text = CSV.record(["group", "name", "count", "bytes"])
    for category in growth.categories {
      text += CSV.record(
        ["category", category.name, String(category.count), String(category.bytes)])
    }
    for stack in growth.stacks.prefix(stackLimit ?? .max) {
      let frames = style.shownFrames(frames(of: stack)).reversed().map { frame in
        FoldedStacks.frameName(frame, style: style)
          + (style.sourceLocation(frame).map { " " + $0 } ?? "")
      }
      let name = frames.isEmpty ? FoldedStacks.unknownFrame : frames.joined(separator: ";")
      text += CSV.record(["stack", name, String(stack.count), String(stack.bytes)])
    }
    return text
  }

  private static func name(_ mark: MarkReference) -> String {
    switch mark {
    case .start: "the start"
    case .end: "the end"
    case .named(let name): "'\(name)'"
    }
  }

  private static func describe(_ mark: MarkReference, _ time: UInt64) -> String {
    switch mark {
    case .start: "the start"
    case .end: "the end (\(TimeText.duration(time)))"
    case .named(let name): "mark '\(name)' (\(TimeText.duration(time)))"
    }
  }
}
