/// The state of an ``ImageCache``, guarded by its lock: the entries in least-recently-used
/// order (a doubly linked list in an array, so that a hit, an insertion and an eviction each
/// cost O(1)), their total cost, and the counters.
struct ImageCacheStorage<Key: Hashable> {
  private struct Node {
    var key: Key
    var image: PixelBuffer?
    var cost: Int
    var older = -1
    var newer = -1
  }

  private var nodes: [Node] = []
  private var freeNodes: [Int] = []
  private var index: [Key: Int] = [:]
  /// Most recently used entry; -1 when empty.
  private var newest = -1
  /// Least recently used entry, the next to go; -1 when empty.
  private var oldest = -1

  var costLimit: Int
  var countLimit: Int
  private(set) var totalCost = 0
  var hits = 0
  var misses = 0
  private(set) var evictions = 0

  init(costLimit: Int, countLimit: Int) {
    self.costLimit = costLimit
    self.countLimit = countLimit
  }

  var count: Int { index.count }

  /// The image for `key`, now the most recently used; `nil` when absent.
  mutating func lookUp(_ key: Key) -> PixelBuffer? {
    guard let slot = index[key] else { return nil }
    unlink(slot)
    linkNewest(slot)
    return nodes[slot].image
  }

  /// Inserts or replaces the entry for `key`, then evicts the least recently used entries
  /// until the limits hold. Returns what left the cache, for the caller to release unlocked.
  mutating func insert(_ image: PixelBuffer, cost: Int, for key: Key) -> [Evicted] {
    var gone = remove(key).map { [$0] } ?? []
    // An image dearer than the whole limit is not kept (NSCache would evict it at once).
    guard cost <= costLimit else { return gone }
    let node = Node(key: key, image: image, cost: cost)
    let slot: Int
    if let free = freeNodes.popLast() {
      slot = free
      nodes[slot] = node
    } else {
      slot = nodes.count
      nodes.append(node)
    }
    index[key] = slot
    linkNewest(slot)
    totalCost += cost
    gone += trim(toCost: costLimit, count: countLimit)
    return gone
  }

  /// Takes the entry for `key` out; `nil` when absent.
  mutating func remove(_ key: Key) -> Evicted? {
    guard let slot = index.removeValue(forKey: key) else { return nil }
    return take(slot)
  }

  /// Evicts least recently used entries until the total cost is at most `cost` and, when
  /// `count` is positive, there are at most `count` entries.
  mutating func trim(toCost cost: Int, count limit: Int = 0) -> [Evicted] {
    var gone: [Evicted] = []
    while oldest >= 0 && (totalCost > cost || (limit > 0 && index.count > limit)) {
      index.removeValue(forKey: nodes[oldest].key)
      gone.append(take(oldest))
      evictions += 1
    }
    return gone
  }

  /// An entry that left the cache, with whether the cache held the image's last reference,
  /// in which case its pixels are unmapped when the caller lets go of it.
  struct Evicted {
    var image: PixelBuffer
    var cost: Int
    var wasLastReference: Bool
  }

  private mutating func take(_ slot: Int) -> Evicted {
    unlink(slot)
    var image = nodes[slot].image!
    nodes[slot].image = nil
    let unique = isKnownUniquelyReferenced(&image)
    totalCost -= nodes[slot].cost
    freeNodes.append(slot)
    return Evicted(image: image, cost: nodes[slot].cost, wasLastReference: unique)
  }

  private mutating func unlink(_ slot: Int) {
    let (older, newer) = (nodes[slot].older, nodes[slot].newer)
    if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
    if newer >= 0 { nodes[newer].older = older } else { newest = older }
    nodes[slot].older = -1
    nodes[slot].newer = -1
  }

  private mutating func linkNewest(_ slot: Int) {
    nodes[slot].older = newest
    nodes[slot].newer = -1
    if newest >= 0 { nodes[newest].newer = slot } else { oldest = slot }
    newest = slot
  }
}
