import HeaplineTrace

/// Numbers the ids a pass meets (stacks, categories) 0, 1, 2… in the order it meets them, so
/// that their counters live in arrays.
///
/// A pass looks an id up once per event, millions of times: a `Dictionary` spent a tenth of
/// `timeline`'s time hashing. The shim numbers stacks 1, 2, 3… and size classes and its own
/// categories have small ids, so ids under `denseLimit` are looked up in an array; others (a
/// damaged trace's, a named category's) fall back to a dictionary.
struct IDSlots<ID: RawRepresentable & Hashable> where ID.RawValue == UInt64 {
  private let denseLimit: UInt64
  private var dense: [Int32] = []
  private var sparse: [ID: Int32] = [:]
  /// The ids by slot.
  private(set) var ids: [ID] = []

  init(denseLimit: UInt64) { self.denseLimit = denseLimit }

  /// The slot of `id`, or `nil` if it has none.
  func slot(of id: ID) -> Int? {
    if id.rawValue < denseLimit {
      let index = Int(id.rawValue)
      return index < dense.count && dense[index] >= 0 ? Int(dense[index]) : nil
    }
    return sparse[id].map(Int.init)
  }

  /// The slot of `id`, numbered next if it has none yet.
  mutating func slot(adding id: ID) -> Int {
    if let slot = slot(of: id) { return slot }
    let slot = Int32(ids.count)
    ids.append(id)
    if id.rawValue < denseLimit {
      let index = Int(id.rawValue)
      if index >= dense.count {
        dense.append(contentsOf: repeatElement(-1, count: max(index + 1, 2 * dense.count) - dense.count))
      }
      dense[index] = slot
    } else {
      sparse[id] = slot
    }
    return Int(slot)
  }
}

extension IDSlots where ID == CategoryID {
  /// Slots for categories: size classes and the shim's categories are dense.
  init() { self.init(denseLimit: 1 << 16) }
}

extension IDSlots where ID == StackID {
  /// Slots for stacks: the shim numbers them 1, 2, 3…, up to the stack table's bound.
  init() { self.init(denseLimit: 1 << 24) }
}
