import HeaplineTrace

/// Frame and count text shared by the text renderers: the statistics, growth, comparison and
/// leak reports.
enum FrameLines {
  /// `#0 makeBlocks()  Sources/App/main.swift:9  (app)`, one line per frame shown,
  /// innermost first.
  static func lines(
    _ frames: [SymbolizedFrame], style: FrameStyle, indent: String = "      "
  ) -> [String] {
    lines(frames, traits: frames.map(style.traits), style: style, indent: indent)
  }

  /// ``lines(_:style:indent:)`` of frames whose traits in `style` are known.
  static func lines(
    _ frames: [SymbolizedFrame], traits: [FrameStyle.Traits], style: FrameStyle,
    indent: String = "      "
  ) -> [String] {
    let shown = style.shownIndexes(traits).map { frames[$0] }
    guard !shown.isEmpty else { return [indent + "(no frames recorded)"] }
    return shown.enumerated().map { index, frame in
      let location = style.sourceLocation(frame) ?? ""
      let module = frame.moduleName.map { "(\($0))" } ?? ""
      let inlined = frame.isInlined ? " [inlined]" : ""
      return style.capped(name: style.name(frame)) { name in
        let parts = ["#\(index) \(name)\(inlined)", location, module]
        return indent + parts.filter { !$0.isEmpty }.joined(separator: "  ")
      }
    }
  }

  /// `80,000 B in 20 blocks`.
  static func bytesInBlocks(_ bytes: UInt64, _ count: UInt64) -> String {
    "\(ByteCountText.grouped(bytes)) B in \(ByteCountText.grouped(count)) block"
      + (count == 1 ? "" : "s")
  }

  /// `+2,000`, `-512`, `0`.
  static func signed(_ value: Int64) -> String {
    let magnitude = ByteCountText.grouped(value.magnitude)
    return value > 0 ? "+" + magnitude : value < 0 ? "-" + magnitude : "0"
  }
}
