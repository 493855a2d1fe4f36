import HeaplineTrace

/// Frame and count text shared by the growth and comparison reports, in the style of the
/// statistics report.
enum FrameLines {
  /// `#0 make_blocks  blocks.c:9  (blocks)`, one line per frame, innermost first.
  static func lines(_ frames: [SymbolizedFrame], indent: String = "      ") -> [String] {
    guard !frames.isEmpty else { return [indent + "(no frames recorded)"] }
    return frames.enumerated().map { index, frame in
      let name = frame.displayName + (frame.isInlined ? " [inlined]" : "")
      let parts = [
        "#\(index) \(name)", frame.sourceLocation ?? "", frame.moduleName.map { "(\($0))" } ?? "",
      ]
      return indent + parts.filter { !$0.isEmpty }.joined(separator: "  ")
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
