import CPrefetch
import HeaplineTrace

/// Live blocks by alloc id in a hash table: the blocks of a ``LiveTable`` that its pages do not
/// hold, those scattered among freed ones and those of ids that pages cannot place.
///
/// A pass makes one insert and one removal per block, millions of them: a `Dictionary` spent
/// more than half of `report`'s time hashing `AllocID`s with SipHash and moving its whole
/// storage when it doubled, and its peak memory was the old storage and the new one at once.
/// So ids are packed into one word, hashed by a multiplication, and spread over 64 segments of
/// open addressing that grow one at a time: growing costs a 64th of the table, not all of it.
struct LiveHashTable<Payload> {
  private var segments: [LiveTableSegment<Payload>]
  /// Ids that do not pack into a word (a damaged trace's): rare, so a plain dictionary.
  private var unpacked: [AllocID: Payload] = [:]
  private(set) var count = 0

  init() {
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
    if previous == nil { count += 1 }
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

  /// Slots allocated across the segments: the table's memory, in slots.
  var slotCount: Int { segments.reduce(0) { $0 + $1.slotCount } }

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
/// A run of this many consecutive allocations of a thread shares a segment and adjacent
/// slots (``liveTableHash(_:)``).
private let liveTableRunBits = 4

/// Fibonacci hashing of the key's run (`key >> liveTableRunBits`): its top bits pick the
/// segment, and the bits after them the run's place in it; the key's last bits are its offset
/// in the run (``LiveTableSegment``). A thread's allocations have consecutive counters, and
/// programs free blocks in about the order they made them, so a pass's inserts and removals
/// come in runs of adjacent slots, a cache line for several instead of a miss each.
@inline(__always) private func liveTableHash(_ key: UInt64) -> UInt64 {
  (key >> liveTableRunBits) &* 0x9E37_79B9_7F4A_7C15
}

/// One segment of a ``LiveTable``: linear probing with removals that shift the following
/// entries back, so no slot is ever a tombstone. A key and its payload share a slot, so that
/// finding a block costs one cache miss, not two. The capacity is a whole number of runs of
/// 2^``liveTableRunBits`` slots (the keys of one run have adjacent homes), not a power of two,
/// so that a segment grows by a quarter and stays between 7/10 and 7/8 full: the table's
/// memory at a peak is about 1.3 slots a block, where doubling left it anywhere up to 2.7.
/// A class, so that the table's array of segments is never copied on write.
final class LiveTableSegment<Payload> {
  private struct Slot {
    var key: UInt64
    var payload: Payload
  }

  private static var empty: UInt64 { .max }
  private static var run: Int { 1 << liveTableRunBits }
  private var slots: UnsafeMutablePointer<Slot>
  private var runs = 1
  private var capacity: Int { runs << liveTableRunBits }
  private var count = 0

  init() { slots = Self.emptySlots(Self.run) }

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

  /// Where `key` would stand with no collision: its run's place, from the hash's 32 bits after
  /// the segment's scaled to the number of runs, then its offset in the run.
  private func home(_ key: UInt64) -> Int {
    let place = (liveTableHash(key) << liveTableSegmentBits) >> 32
    let run = Int(truncatingIfNeeded: (place &* UInt64(runs)) >> 32)
    return run << liveTableRunBits | Int(truncatingIfNeeded: key) & (Self.run - 1)
  }

  private func next(_ i: Int) -> Int { i + 1 == capacity ? 0 : i + 1 }

  /// The slot of `key`, or the empty slot where it would go.
  private func find(_ key: UInt64) -> Int {
    var i = home(key)
    while slots[i].key != key && slots[i].key != Self.empty { i = next(i) }
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
    if count * 8 > capacity * 7 { grow() }
    return nil
  }

  func remove(_ key: UInt64) -> Payload? {
    var hole = find(key)
    guard slots[hole].key == key else { return nil }
    let removed = slots[hole].payload
    count -= 1
    // Shift back each following entry that may sit in the hole: one whose home slot is not
    // cyclically between the hole and where it stands.
    let capacity = self.capacity
    func distance(_ from: Int, _ to: Int) -> Int { to >= from ? to - from : to + capacity - from }
    var i = hole
    while true {
      i = next(i)
      let k = slots[i].key
      if k == Self.empty { break }
      if distance(home(k), i) >= distance(hole, i) {
        slots[hole] = slots[i]
        hole = i
      }
    }
    slots[hole].key = Self.empty
    return removed
  }

  /// Slots allocated, empty or not.
  var slotCount: Int { capacity }

  func forEach(_ body: (Payload) -> Void) {
    for i in 0..<capacity where slots[i].key != Self.empty { body(slots[i].payload) }
  }

  private func grow() {
    let old = slots
    let oldCapacity = capacity
    runs += max(1, runs / 4)
    slots = Self.emptySlots(capacity)
    for i in 0..<oldCapacity where old[i].key != Self.empty { slots[find(old[i].key)] = old[i] }
    old.deallocate()
  }
}
