import CPrefetch
import HeaplineTrace

/// The blocks live at the current point of a pass, by alloc id, each with what the pass must
/// remember of it. It is the only structure of a pass that can grow, and it grows with the
/// live blocks, never with the number of events; ``maxCount`` says how far it grew.
///
/// A thread's alloc counters are consecutive, so its blocks go to pages of 256 consecutive
/// counters, found by two array lookups (``LivePages``): no hashing, no probing, no moving of
/// the table when it grows, and a block costs its payload and a bit. A pass makes an insert and
/// a removal per block, millions of them, and a hash table's (``LiveHashTable``) probes were a
/// fifth of `report`'s time on a real program.
///
/// A page that the thread has moved past and that holds no more than a quarter of its blocks
/// gives them to a hash table and is freed, so that blocks kept among many freed ones cost
/// what they cost in a hash table, and memory stays in proportion to the live blocks.
struct LiveTable<Payload> {
  /// The pages of each thread, by thread serial.
  private var owners: [LivePages<Payload>?] = []
  /// The same pages, lent without retaining them: a retain and a release per event, for the
  /// lookup of a thread's pages, cost a tenth of a pass.
  private var threads: [Unmanaged<LivePages<Payload>>?] = []
  /// The blocks that no page holds.
  private var scattered = LiveHashTable<Payload>()
  private(set) var count = 0
  /// The most blocks held at once.
  private(set) var maxCount = 0

  init() {
    precondition(_isPOD(Payload.self), "a live table's payload is plain data")
  }

  /// Adds a block. An id that is still live means a damaged or duplicated record: the old
  /// block is returned so that the caller retires it, as the statistics pass does.
  mutating func insert(_ id: AllocID, _ payload: Payload) -> Payload? {
    let previous: Payload?
    let insertion = pages(id.threadSerial, adding: true)?._withUnsafeGuaranteedRef {
      $0.insert(id.counter, payload)
    }
    if let insertion, insertion.paged {
      previous = insertion.previous
      if let passed = insertion.passedPage { evict(id.threadSerial, passed) }
    } else {
      previous = scattered.insert(id, payload)
    }
    if previous == nil {
      count += 1
      maxCount = max(maxCount, count)
    }
    return previous
  }

  /// Removes and returns a block; `nil` for a free of a block allocated before recording.
  mutating func remove(_ id: AllocID) -> Payload? {
    var removed: Payload?
    if let pages = pages(id.threadSerial, adding: false) {
      let (payload, sparse) = pages._withUnsafeGuaranteedRef { $0.remove(id.counter) }
      removed = payload
      if let sparse { evict(id.threadSerial, sparse) }
    }
    if removed == nil, scattered.count > 0 { removed = scattered.remove(id) }
    if removed != nil { count -= 1 }
    return removed
  }

  /// Starts loading where `id` stands or would stand, so that the cache miss of a later
  /// ``insert(_:_:)`` or ``remove(_:)`` overlaps the work before it (``LookaheadEvents``).
  /// Mutating though it changes nothing: a pass calls it from a closure that captures its
  /// table, and a non-mutating call there copies the table, a retain and release of each of
  /// its arrays per event.
  mutating func prefetch(_ id: AllocID) {
    let serial = Int(id.threadSerial)
    if serial < threads.count, let pages = threads[serial],
      pages._withUnsafeGuaranteedRef({ $0.prefetch(id.counter) })
    {
      return
    }
    scattered.prefetch(id)
  }

  /// The live blocks, in no particular order.
  var values: [Payload] {
    var all: [Payload] = []
    all.reserveCapacity(count)
    for case let pages? in owners { pages.forEach { all.append($0) } }
    all.append(contentsOf: scattered.values)
    return all
  }

  /// The bytes the table holds: its pages, their directories and the hash table's slots.
  var byteCount: Int {
    owners.reduce(owners.count * 16) { $0 + ($1?.byteCount ?? 0) }
      + scattered.slotCount * MemoryLayout<(UInt64, Payload)>.stride
  }

  /// Blocks held by the hash table rather than pages.
  var scatteredCount: Int { scattered.count }

  /// The pages of a thread; `nil` for a serial too large to index (a damaged trace's).
  private mutating func pages(_ serial: UInt32, adding: Bool) -> Unmanaged<LivePages<Payload>>? {
    let index = Int(serial)
    if index < threads.count, let pages = threads[index] { return pages }
    guard adding, index < livePagesMaxThreads else { return nil }
    if index >= threads.count {
      owners += repeatElement(nil, count: index + 1 - owners.count)
      threads += repeatElement(nil, count: index + 1 - threads.count)
    }
    let pages = LivePages<Payload>()
    owners[index] = pages
    threads[index] = Unmanaged.passUnretained(pages)
    return threads[index]
  }

  /// Moves the blocks of a page that no longer pays for itself to the hash table.
  private mutating func evict(_ serial: UInt32, _ page: UInt64) {
    owners[Int(serial)]!.freePage(page) { counter, payload in
      _ = scattered.insert(AllocID(threadSerial: serial, counter: counter), payload)
    }
  }
}

/// Thread serials past this go to the hash table: a damaged trace may name any serial, and a
/// program that has made so many threads has few blocks a thread.
private let livePagesMaxThreads = 1 << 16
