import HeaplineTrace

/// Numbers the kinds of block a pass meets, 0, 1, 2…: each distinct size, stack and category,
/// so that a live table keeps one small number a block, and what a kind needs (its size, its
/// counters' slots) is looked up in arrays.
///
/// A version 5 ALLOC names its allocation info, which is the kind already: a pass looks the
/// info up in an array. A record that spells its fields out (version 4, or an allocation the
/// shim had no info for) is looked up by those fields.
struct BlockKinds {
  private struct Fields: Hashable {
    var size: UInt64
    var stack: StackID
    var category: CategoryID
  }

  /// Kind + 1 of each info id, 0 for an info not met yet.
  private var byInfo: [Int32] = []
  private var byFields: [Fields: Int32] = [:]
  /// Each kind's size, stack and category.
  private(set) var sizes: [UInt64] = []
  private(set) var stacks: [StackID] = []
  private(set) var categories: [CategoryID] = []

  /// The kind of `alloc`, and whether the pass meets it for the first time (so that it makes
  /// the kind's slots).
  @inline(__always)
  mutating func kind(of alloc: AllocationEvent) -> (kind: Int32, isNew: Bool) {
    let info = Int(alloc.info)
    if info != 0, info < byInfo.count, byInfo[info] != 0 { return (byInfo[info] - 1, false) }
    return slowKind(of: alloc)
  }

  private mutating func slowKind(of alloc: AllocationEvent) -> (kind: Int32, isNew: Bool) {
    let fields = Fields(size: alloc.size, stack: alloc.stack, category: alloc.category)
    let kind: Int32
    var isNew = false
    if let known = byFields[fields] {
      kind = known
    } else {
      kind = Int32(sizes.count)
      byFields[fields] = kind
      sizes.append(alloc.size)
      stacks.append(alloc.stack)
      categories.append(alloc.category)
      isNew = true
    }
    let info = Int(alloc.info)
    if info != 0 {
      if info >= byInfo.count {
        byInfo.append(contentsOf: repeatElement(0, count: max(info + 1, 2 * byInfo.count) - byInfo.count))
      }
      byInfo[info] = kind + 1
    }
    return (kind, isNew)
  }
}
