import HeaplineTrace

/// Numbers the categories a pass meets 0, 1, 2… in the order it meets them, so that their
/// counters live in arrays.
///
/// A pass looks a category up once per event, millions of times: a `Dictionary` spent a tenth
/// of `timeline`'s time hashing. Size classes and the shim's own categories have small ids,
/// looked up in an array; other ids (none in the usual trace) fall back to a dictionary.
struct CategorySlots {
  private var dense: [Int32] = []
  private var sparse: [CategoryID: Int32] = [:]
  /// The categories by slot.
  private(set) var ids: [CategoryID] = []

  private static let denseLimit: UInt64 = 1 << 16

  /// The slot of `id`, or `nil` if it has none.
  func slot(of id: CategoryID) -> Int? {
    if id.rawValue < Self.denseLimit {
      let index = Int(id.rawValue)
      return index < dense.count && dense[index] >= 0 ? Int(dense[index]) : nil
    }
    return sparse[id].map(Int.init)
  }

  /// The slot of `id`, numbered next if it has none yet.
  mutating func slot(adding id: CategoryID) -> Int {
    if let slot = slot(of: id) { return slot }
    let slot = Int32(ids.count)
    ids.append(id)
    if id.rawValue < Self.denseLimit {
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
