import HeaplineTrace

/// Blocks and bytes, summed by some key: the grouping step of growth and generations.
struct Tally<Key: Hashable> {
  private(set) var counts: [Key: (count: UInt64, bytes: UInt64)] = [:]

  mutating func add(_ key: Key, bytes: UInt64) {
    counts[key, default: (0, 0)].count &+= 1
    counts[key, default: (0, 0)].bytes &+= bytes
  }
}

extension Tally where Key == CategoryID {
  /// Categories, most bytes first, then by name.
  func categories(metadata: TraceMetadata) -> [CategoryGrowth] {
    counts.map { id, value in
      let info = metadata.category(id)
      return CategoryGrowth(
        id: id, kind: info.kind, name: info.name, count: value.count, bytes: value.bytes)
    }.sorted { ($1.bytes, $0.name, $0.id) < ($0.bytes, $1.name, $1.id) }
  }
}

extension Tally where Key == StackID {
  /// Stacks, most bytes first, then by id, with their frames.
  func stacks(metadata: TraceMetadata) -> [StackGrowth] {
    counts.map { id, value in
      StackGrowth(id: id, frames: metadata.frames(of: id), count: value.count, bytes: value.bytes)
    }.sorted { ($1.bytes, $0.id) < ($0.bytes, $1.id) }
  }
}
