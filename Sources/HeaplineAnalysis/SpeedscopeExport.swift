import HeaplineTrace

/// A speedscope file (https://www.speedscope.app/file-format-schema.json) with one "sampled"
/// profile per weight: each stack is one sample, root first, weighed in bytes.
///
/// Speedscope's left-heavy and sandwich views then show where the bytes were allocated, as a
/// flame graph of the folded export would.
///
/// ```swift
/// let json = SpeedscopeExport.render(profile, weights: [.live, .peak], name: "app.trace")
/// ```
public enum SpeedscopeExport {
  /// The schema URL that speedscope recognises its files by.
  public static let schemaURL = "https://www.speedscope.app/file-format-schema.json"

  /// The file, one profile per weight in the order given; the first is shown on load.
  public static func render(
    _ profile: StackProfile, weights: [StackWeight], name: String, style: FrameStyle = FrameStyle()
  ) -> String {
    var output = StringOutput()
    // A StringOutput never throws.
    try? write(profile, weights: weights, name: name, style: style, to: &output)
    return output.text
  }

  /// Writes what ``render(_:weights:name:style:)`` returns, a piece at a time: the samples
  /// are made as they are written, so the file never exists whole in memory.
  public static func write(
    _ profile: StackProfile, weights: [StackWeight], name: String, style: FrameStyle = FrameStyle(),
    to output: inout some TextOutput
  ) throws(AnalysisError) {
    var frames: [JSONValue] = []
    var frameIndex: [SymbolizedFrame: Int] = [:]
    func index(of frame: SymbolizedFrame) -> Int {
      // Return addresses in the same function and line are one frame to speedscope; without
      // a function name, the address is all that tells frames apart.
      var key = frame
      if frame.function != nil {
        key.pc = 0
        key.moduleAddress = nil
      }
      if let existing = frameIndex[key] { return existing }
      frameIndex[key] = frames.count
      var members: [(String, JSONValue)] = [("name", .string(style.name(frame)))]
      if let file = frame.file { members.append(("file", .string(file))) }
      if let line = frame.line { members.append(("line", .signed(line))) }
      if let column = frame.column { members.append(("col", .signed(column))) }
      frames.append(.object(members))
      return frames.count - 1
    }
    let unknown = SymbolizedFrame(pc: 0, function: FoldedStacks.unknownFrame)
    // Each of the profile's frames is looked up once: stacks share most of their frames, and
    // hashing a frame's names for every frame of every stack was most of an export's time.
    var indexOfPlace = [Int](repeating: -1, count: profile.frames.count)
    let shown = profile.shownFrames(style: style)
    let stacks = profile.entries.map { entry in
      let places = shown.of(entry)
      guard !places.isEmpty else { return [index(of: unknown)] }
      return places.reversed().map { place in
        if indexOfPlace[place] < 0 { indexOfPlace[place] = index(of: profile.frames[place]) }
        return indexOfPlace[place]
      }
    }
    let profiles = weights.map { weight in
      // The entries this weight samples: only their indexes are kept, not their JSON.
      var sampled: [Int] = []
      var total: UInt64 = 0
      for (index, entry) in profile.entries.enumerated() {
        let value = weight.weight(of: entry.statistics)
        guard value > 0 else { continue }
        sampled.append(index)
        total &+= value
      }
      return JSONValue.object([
        ("type", .string("sampled")), ("name", .string(weight.title(upTo: profile.trace.endTime))),
        ("unit", .string("bytes")),
        ("startValue", .unsigned(0)), ("endValue", .unsigned(total)),
        (
          "samples",
          .lazyArray(count: sampled.count) { .integers(stacks[sampled[$0]]) }
        ),
        (
          "weights",
          .lazyArray(count: sampled.count) {
            .unsigned(weight.weight(of: profile.entries[sampled[$0]].statistics))
          }
        ),
      ])
    }
    let document = JSONValue.object([
      ("$schema", .string(schemaURL)),
      ("shared", .object([("frames", .array(frames))])),
      ("profiles", .array(profiles)),
      ("name", .string(name)),
      ("activeProfileIndex", .signed(0)),
      ("exporter", .string("heapline")),
    ])
    try document.writeCompact(to: &output)
    try output.write("\n")
  }
}
