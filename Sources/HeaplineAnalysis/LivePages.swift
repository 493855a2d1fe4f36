import CPrefetch

/// One thread's live blocks in a ``LiveTable``, by alloc counter: page `p` holds counters
/// `p * 256` to `p * 256 + 255`, each with a bit that says it is live and its payload.
///
/// Pages are found through a directory of blocks of 256 page pointers, one block for 65,536
/// counters from those of the first page made (a rotated trace's file starts where the thread's
/// count was), freed with its last page, so only the directory's top array grows with the
/// thread's allocations, by 8 bytes every 65,536. Counters only grow, so only the newest page
/// (the frontier) gains blocks; an older page that falls to a quarter full is handed back to
/// the table to move its blocks to the hash table (``freePage(_:_:)``).
final class LivePages<Payload> {
  // Unchecked: a pass owns its table alone, and the runtime's checks of each access to a
  // class's properties cost more than the page lookups themselves.
  @exclusivity(unchecked)
  private var directory: [UnsafeMutablePointer<UnsafeMutableRawPointer?>?] = []
  @exclusivity(unchecked) private var pagesInBlock: [Int32] = []
  /// The block of 65,536 counters that the directory's first entry stands for.
  @exclusivity(unchecked) private var base: UInt64?
  /// The newest page: the only one that the thread's next allocations can fill.
  @exclusivity(unchecked) private var frontier: UInt64?
  @exclusivity(unchecked) private var pageCount = 0

  private static var pageSize: Int { 256 }
  /// A page's header: its count of live blocks, then 256 bits of which are live.
  private static var payloadOffset: Int {
    let align = MemoryLayout<Payload>.alignment
    return (40 + align - 1) / align * align
  }
  private static var pageBytes: Int { payloadOffset + pageSize * MemoryLayout<Payload>.stride }
  /// A page this far above the directory's end is a damaged trace's counter: 2^28 blocks.
  private static var maxDirectoryJump: Int { 4096 }

  init() {}

  deinit {
    for case let block? in directory {
      for i in 0..<256 { block[i]?.deallocate() }
      block.deallocate()
    }
  }

  /// What an insert did: whether a page took the block, the block it replaced, and a page the
  /// thread has just moved past that holds too few blocks to keep.
  struct Insertion {
    var paged: Bool
    var previous: Payload?
    var passedPage: UInt64?
  }

  func insert(_ counter: UInt64, _ payload: Payload) -> Insertion {
    let index = counter >> 8
    var passed: UInt64?
    var page = self.page(index)
    if page == nil {
      // A new page only above the frontier: below it, a missing page was freed.
      if let frontier, index <= frontier { return Insertion(paged: false) }
      guard let made = makePage(index) else { return Insertion(paged: false) }
      if let frontier, Self.isSparse(self.page(frontier)!) { passed = frontier }
      frontier = index
      page = made
    }
    let raw = page!
    let slot = Int(counter & 255)
    let (word, bit) = Self.liveBit(raw, slot)
    var previous: Payload?
    if word.pointee & bit != 0 {
      previous = Self.payloads(raw)[slot]
    } else {
      word.pointee |= bit
      raw.assumingMemoryBound(to: Int.self).pointee += 1
    }
    Self.payloads(raw)[slot] = payload
    return Insertion(paged: true, previous: previous, passedPage: passed)
  }

  /// Removes a block: its payload, or nil when no page holds it, and the page's index when it
  /// has become too sparse to keep.
  func remove(_ counter: UInt64) -> (Payload?, sparsePage: UInt64?) {
    let index = counter >> 8
    guard let raw = page(index) else { return (nil, nil) }
    let slot = Int(counter & 255)
    let (word, bit) = Self.liveBit(raw, slot)
    guard word.pointee & bit != 0 else { return (nil, nil) }
    word.pointee &= ~bit
    raw.assumingMemoryBound(to: Int.self).pointee -= 1
    let payload = Self.payloads(raw)[slot]
    let sparse = index != frontier && Self.isSparse(raw)
    return (payload, sparse ? index : nil)
  }

  /// Starts loading the header and the slot of `counter`; false when no page holds it.
  func prefetch(_ counter: UInt64) -> Bool {
    guard let raw = page(counter >> 8) else { return false }
    heapline_prefetch(raw)
    heapline_prefetch(Self.payloads(raw) + Int(counter & 255))
    return true
  }

  /// Hands each block of page `index` to `body` with its counter, then frees the page.
  func freePage(_ index: UInt64, _ body: (UInt64, Payload) -> Void) {
    guard let raw = page(index) else { return }
    Self.forEach(raw) { slot, payload in body(index << 8 | UInt64(slot), payload) }
    raw.deallocate()
    let top = Int((index >> 8) - base!)
    directory[top]![Int(index & 255)] = nil
    pageCount -= 1
    pagesInBlock[top] -= 1
    if pagesInBlock[top] == 0 {
      directory[top]!.deallocate()
      directory[top] = nil
    }
  }

  func forEach(_ body: (Payload) -> Void) {
    for case let block? in directory {
      for i in 0..<256 {
        if let raw = block[i] { Self.forEach(raw) { _, payload in body(payload) } }
      }
    }
  }

  /// The bytes of the pages and the directory.
  var byteCount: Int {
    pageCount * Self.pageBytes + directory.count * 12
      + directory.reduce(0) { $0 + ($1 == nil ? 0 : 256 * 8) }
  }

  private func page(_ index: UInt64) -> UnsafeMutableRawPointer? {
    guard let base, index >> 8 >= base else { return nil }
    let top = Int(truncatingIfNeeded: (index >> 8) - base)
    guard top < directory.count, let block = directory[top] else { return nil }
    return block[Int(index & 255)]
  }

  private func makePage(_ index: UInt64) -> UnsafeMutableRawPointer? {
    if base == nil { base = index >> 8 }
    guard index >> 8 >= base!,
      (index >> 8) - base! < UInt64(directory.count + Self.maxDirectoryJump)
    else { return nil }
    let top = Int((index >> 8) - base!)
    if top >= directory.count {
      directory += repeatElement(nil, count: top + 1 - directory.count)
      pagesInBlock += repeatElement(0, count: top + 1 - pagesInBlock.count)
    }
    if directory[top] == nil {
      let block = UnsafeMutablePointer<UnsafeMutableRawPointer?>.allocate(capacity: 256)
      block.initialize(repeating: nil, count: 256)
      directory[top] = block
    }
    let raw = UnsafeMutableRawPointer.allocate(
      byteCount: Self.pageBytes, alignment: max(8, MemoryLayout<Payload>.alignment))
    raw.initializeMemory(as: UInt64.self, repeating: 0, count: 5)  // the count and the bits
    directory[top]![Int(index & 255)] = raw
    pageCount += 1
    pagesInBlock[top] += 1
    return raw
  }

  private static func isSparse(_ raw: UnsafeMutableRawPointer) -> Bool {
    raw.assumingMemoryBound(to: Int.self).pointee * 4 <= pageSize
  }

  private static func forEach(_ raw: UnsafeMutableRawPointer, _ body: (Int, Payload) -> Void) {
    for word in stride(from: 0, to: pageSize, by: 64) {
      var bits = liveBit(raw, word).word.pointee
      while bits != 0 {
        let slot = word + bits.trailingZeroBitCount
        body(slot, payloads(raw)[slot])
        bits &= bits - 1
      }
    }
  }

  /// The word of the page's header that holds `slot`'s live bit, and the bit.
  private static func liveBit(_ raw: UnsafeMutableRawPointer, _ slot: Int)
    -> (word: UnsafeMutablePointer<UInt64>, bit: UInt64)
  {
    (raw.advanced(by: 8 + (slot >> 6) * 8).assumingMemoryBound(to: UInt64.self), 1 << (slot & 63))
  }

  private static func payloads(_ raw: UnsafeMutableRawPointer) -> UnsafeMutablePointer<Payload> {
    raw.advanced(by: payloadOffset).assumingMemoryBound(to: Payload.self)
  }
}
