import HeaplineTrace

/// Collapsed stacks, the text format that `flamegraph.pl` and `inferno-flamegraph` read: one
/// line per stack, its frames from the root separated by `;`, a space, and the integer weight.
///
/// ```
/// main;load_images;decode_png 1048576
/// ```
///
/// Frames are function names (`module+0xoffset` without symbols); stacks whose frames read
/// the same are merged, and stacks that weigh nothing are left out, so the weights add up to
/// the trace's total for the weight: live bytes at exit, the peak, or bytes allocated.
public enum FoldedStacks {
  /// The frame name of a stack with no frames recorded.
  public static let unknownFrame = "[unknown]"

  /// The folded lines of `profile`, sorted, each ending in a newline; frames named and chosen
  /// as `style` says (the allocator's entry frames left out, by default).
  public static func render(
    _ profile: StackProfile, weight: StackWeight, style: FrameStyle = FrameStyle()
  ) -> String {
    var weights: [String: UInt64] = [:]
    let shown = profile.shownFrames(style: style)
    for entry in profile.entries {
      let value = weight.weight(of: entry.statistics)
      guard value > 0 else { continue }
      let frames = shown.of(entry).reversed().map { profile.frames[$0] }
      let names = frames.isEmpty ? [unknownFrame] : frames.map { frameName($0, style: style) }
      weights[names.joined(separator: ";"), default: 0] &+= value
    }
    return weights.keys.sorted().map { "\($0) \(weights[$0]!)\n" }.joined()
  }

  /// A frame's name with the characters that would break a line replaced: `;` separates
  /// frames and a line break ends the record.
  static func frameName(_ frame: SymbolizedFrame, style: FrameStyle? = nil) -> String {
    String(
      (style?.name(frame) ?? frame.displayName).map { character in
        switch character {
        case ";": ":"
        case "\n", "\r": " "
        default: character
        }
      })
  }
}
