import HeaplineTrace

extension ObjectListWriter {
  /// The first user frame of each stack (see ``FrameRole``), or its innermost frame with
  /// `innermost`: the `top_frame` column.
  ///
  /// The innermost few frames of every stack are symbolized in one batch, since the user's
  /// frame is nearly always among them; the stacks whose frames there are all allocator entries
  /// or thunks are symbolized in full in a second batch.
  struct TopFrames {
    /// How many innermost frames the first batch symbolizes per stack.
    static let prefixLength = 8

    private(set) var frames: [UInt64: SymbolizedFrame] = [:]
    /// Distinct return addresses symbolized, over both batches.
    private(set) var symbolizedFrameCount = 0

    init(stacks: Set<UInt64>, metadata: TraceMetadata, symbolizer: Symbolizer, innermost: Bool) {
      var unresolved: [UInt64] = []
      let length = innermost ? 1 : Self.prefixLength
      let prefixes = stacks.map { ($0, metadata.frames(of: StackID($0), limit: length)) }
      let symbols = symbolize(prefixes.map(\.1), metadata: metadata, symbolizer: symbolizer)
      for (stack, pcs) in prefixes {
        let expanded = symbols.expand(pcs)
        if innermost {
          frames[stack] = expanded.frames.first
          continue
        }
        let hidden = FrameRole.leadingHiddenCount(traits: expanded.traits)
        if hidden < expanded.frames.count || pcs.count < Self.prefixLength {
          frames[stack] = expanded.firstUserFrame
        } else {
          unresolved.append(stack)
        }
      }
      guard !unresolved.isEmpty else { return }
      let whole = unresolved.map { ($0, metadata.frames(of: StackID($0))) }
      let more = symbolize(whole.map(\.1), metadata: metadata, symbolizer: symbolizer)
      for (stack, pcs) in whole { frames[stack] = more.expand(pcs).firstUserFrame }
    }

    private mutating func symbolize(
      _ stacks: [[UInt64]], metadata: TraceMetadata, symbolizer: Symbolizer
    ) -> ExpandedFrames {
      let pcs = Set(stacks.joined())
      symbolizedFrameCount += pcs.count
      return ExpandedFrames(symbolizer.symbolize(pcs, modules: metadata.modules))
    }
  }
}
