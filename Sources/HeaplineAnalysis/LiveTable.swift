import HeaplineTrace

/// The blocks live at the current point of a pass, by alloc id, each with what the pass must
/// remember of it. It is the only structure of a pass that can grow, and it grows with the
/// live blocks, never with the number of events; ``maxCount`` says how far it grew.
struct LiveTable<Payload> {
  private var blocks: [AllocID: Payload] = [:]
  /// The most blocks held at once.
  private(set) var maxCount = 0

  var count: Int { blocks.count }

  /// Adds a block. An id that is still live means a damaged or duplicated record: the old
  /// block is returned so that the caller retires it, as the statistics pass does.
  mutating func insert(_ id: AllocID, _ payload: Payload) -> Payload? {
    let previous = blocks.updateValue(payload, forKey: id)
    maxCount = max(maxCount, blocks.count)
    return previous
  }

  /// Removes and returns a block; `nil` for a free of a block allocated before recording.
  mutating func remove(_ id: AllocID) -> Payload? {
    blocks.removeValue(forKey: id)
  }

  /// The live blocks, in no particular order.
  var values: Dictionary<AllocID, Payload>.Values { blocks.values }
}
