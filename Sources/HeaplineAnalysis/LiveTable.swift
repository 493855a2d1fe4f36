import CPrefetch
import HeaplineTrace

/// The blocks live at the current point of a pass, by alloc id, each with what the pass must
/// remember of it. It is the only structure of a pass that can grow, and it grows with the
/// live blocks, never with the number of events; ``maxCount`` says how far it grew.
///
/// A pass makes one insert and one removal per block, millions of them: a `Dictionary` spent
/// more than half of `report`'s time hashing `AllocID`s with SipHash and moving its whole
/// storage when it doubled, and its peak memory was the old storage and the new one at once.
/// So ids are packed into one word, hashed by a multiplication, and spread over 64 segments of
/// open addressing that grow one at a time: growing costs a 64th of the table, not all of it.
struct LiveTable<Payload> {
  private var segments: [LiveTableSegment<Payload>]
  /// Ids that do not pack into a word (a damaged trace's): rare, so a plain dictionary.
  private var unpacked: [AllocID: Payload] = [:]
  private(set) var count = 0
  /// The most blocks held at once.
  private(set) var maxCount = 0

  init() {
    precondition(_isPOD(Payload.self), "a live table's payload is plain data")
    segments = (0..<(1 << liveTableSegmentBits)).map { _ in LiveTableSegment() }
  }

  /// Adds a block. An id that is still live means a damaged or duplicated record: the old
  /// block is returned so that the caller retires it, as the statistics pass does.
  mutating func insert(_ id: AllocID, _ payload: Payload) -> Payload? {
    let previous: Payload?
    if let key = Self.key(id) {
      previous = segments[Self.segment(key)].insert(key, payload)
    } else {
      previous = unpacked.updateValue(payload, forKey: id)
    }
    if previous == nil {
      count += 1
      maxCount = max(maxCount, count)
    }
    return previous
  }

  /// Removes and returns a block; `nil` for a free of a block allocated before recording.
  mutating func remove(_ id: AllocID) -> Payload? {
    let removed: Payload?
    if let key = Self.key(id) {
      removed = segments[Self.segment(key)].remove(key)
    } else {
      removed = unpacked.removeValue(forKey: id)
    }
    if removed != nil { count -= 1 }
    return removed
  }

  /// Starts loading the slot where `id` stands or would stand, so that the cache miss of a
  /// later ``insert(_:_:)`` or ``remove(_:)`` overlaps the work before it (``LookaheadEvents``).
  func prefetch(_ id: AllocID) {
    guard let key = Self.key(id) else { return }
    segments[Self.segment(key)].prefetch(key)
  }

  /// The live blocks, in no particular order.
  var values: [Payload] {
    var all: [Payload] = []
    all.reserveCapacity(count)
    for segment in segments { segment.forEach { all.append($0) } }
    all.append(contentsOf: unpacked.values)
    return all
  }

  /// A thread serial of 24 bits and a counter of 40, or nil: a million threads' trillion
  /// allocations each fit, and the all-ones word stays free to mark an empty slot.
  private static func key(_ id: AllocID) -> UInt64? {
    guard id.threadSerial < (1 << 24) - 1, id.counter < (1 << 40) else { return nil }
    return UInt64(id.threadSerial) << 40 | id.counter
  }

  private static func segment(_ key: UInt64) -> Int {
    Int(liveTableHash(key) >> (64 - liveTableSegmentBits))
  }
}

private let liveTableSegmentBits = 6

/// Fibonacci hashing: its top bits pick the segment, and the bits after them the slot.
@inline(__always) private func liveTableHash(_ key: UInt64) -> UInt64 {
  key &* 0x9E37_79B9_7F4A_7C15
}

/// One segment of a ``LiveTable``: linear probing in a power-of-two table kept at most 3/4
/// full, with removals that shift the following entries back, so no slot is ever a tombstone.
/// A key and its payload share a slot, so that finding a block costs one cache miss, not two.
/// A class, so that the table's array of segments is never copied on write.
final class LiveTableSegment<Payload> {
  private struct Slot {
    var key: UInt64
    var payload: Payload
  }

  private static var empty: UInt64 { .max }
  private var slots: UnsafeMutablePointer<Slot>
  private var bits = 4
  private var count = 0

  init() { slots = Self.emptySlots(1 << bits) }

  deinit { slots.deallocate() }  // plain data: nothing to deinitialize

  /// Slots whose keys say empty; their payloads are never read before they are written.
  private static func emptySlots(_ capacity: Int) -> UnsafeMutablePointer<Slot> {
    let slots = UnsafeMutablePointer<Slot>.allocate(capacity: capacity)
    let raw = UnsafeMutableRawPointer(slots)
    for i in 0..<capacity {
      raw.storeBytes(of: empty, toByteOffset: i * MemoryLayout<Slot>.stride, as: UInt64.self)
    }
    return slots
  }

  private var mask: Int { (1 << bits) - 1 }

  /// Where `key` would stand with no collision: the hash's bits after the segment's.
  private func home(_ key: UInt64) -> Int {
    Int((liveTableHash(key) << liveTableSegmentBits) >> (64 - bits))
  }

  /// The slot of `key`, or the empty slot where it would go.
  private func find(_ key: UInt64) -> Int {
    var i = home(key)
    while slots[i].key != key && slots[i].key != Self.empty { i = (i + 1) & mask }
    return i
  }

  func prefetch(_ key: UInt64) { heapline_prefetch(slots + home(key)) }

  func insert(_ key: UInt64, _ payload: Payload) -> Payload? {
    let i = find(key)
    if slots[i].key == key {
      defer { slots[i].payload = payload }
      return slots[i].payload
    }
    slots[i] = Slot(key: key, payload: payload)
    count += 1
    if count * 4 > (3 << bits) { grow() }
    return nil
  }

  func remove(_ key: UInt64) -> Payload? {
    var hole = find(key)
    guard slots[hole].key == key else { return nil }
    let removed = slots[hole].payload
    count -= 1
    // Shift back each following entry that may sit in the hole: one whose home slot is not
    // cyclically between the hole and where it stands.
    var i = hole
    while true {
      i = (i + 1) & mask
      let k = slots[i].key
      if k == Self.empty { break }
      if (i - home(k)) & mask >= (i - hole) & mask {
        slots[hole] = slots[i]
        hole = i
      }
    }
    slots[hole].key = Self.empty
    return removed
  }

  func forEach(_ body: (Payload) -> Void) {
    for i in 0...mask where slots[i].key != Self.empty { body(slots[i].payload) }
  }

  private func grow() {
    let old = slots
    let oldCapacity = 1 << bits
    bits += 1
    slots = Self.emptySlots(1 << bits)
    for i in 0..<oldCapacity where old[i].key != Self.empty { slots[find(old[i].key)] = old[i] }
    old.deallocate()
  }
}
