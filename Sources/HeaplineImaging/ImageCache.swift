import Heapline
import Synchronization

/// A thread-safe cache of decoded images, modelled on `NSCache`: a cost limit (an image costs
/// its backing-store bytes) and a count limit, least-recently-used eviction, hit and miss
/// counters, and a purge when memory warnings come.
///
/// The cache registers itself as a `MemoryPressure` observer named after it: a warning trims
/// it to half of its cost limit, an urgent warning to a quarter, a critical one empties it
/// (`MemoryPressure.Level.retainedBytes(of:)` in Heapline). The observer answers with the bytes it
/// actually freed: images still shown elsewhere leave the cache but free nothing.
///
/// ```swift
/// let cache = ImageCache<String>(name: "Slides", costLimit: 64 << 20)
/// if let image = cache.image(forKey: path) { show(image) }
/// else {
///   let image = try decoder.decode(contentsOf: path)
///   cache.setImage(image, forKey: path)
/// }
/// ```
public final class ImageCache<Key: Hashable & Sendable>: Sendable {
  /// The observer's name in traces and low-memory reports.
  public let name: String
  private let storage: Mutex<ImageCacheStorage<Key>>
  private let observation: Mutex<MemoryPressureObservation?>

  /// A cache of at most `costLimit` bytes of images and, when `countLimit` is positive, at
  /// most that many images. With `purgesOnMemoryWarning`, it observes memory warnings.
  public init(
    name: String = "ImageCache", costLimit: Int, countLimit: Int = 0,
    purgesOnMemoryWarning: Bool = true
  ) {
    self.name = name
    storage = Mutex(ImageCacheStorage(costLimit: max(0, costLimit), countLimit: countLimit))
    observation = Mutex(nil)
    guard purgesOnMemoryWarning else { return }
    let observer = MemoryPressure.addObserver(named: name) { [weak self] level in
      self?.purge(for: level) ?? 0
    }
    observation.withLock { $0 = observer }
  }

  /// The image cached for `key`, which becomes the most recently used; `nil` (a miss) when
  /// there is none.
  public func image(forKey key: Key) -> PixelBuffer? {
    storage.withLock { storage in
      let image = storage.lookUp(key)
      if image == nil { storage.misses += 1 } else { storage.hits += 1 }
      return image
    }
  }

  /// Caches `image` for `key` at a cost of its ``PixelBuffer/byteCount``, then evicts the
  /// least recently used images until both limits hold. An image that costs more than the
  /// whole limit is not cached.
  public func setImage(_ image: PixelBuffer, forKey key: Key) {
    let gone = storage.withLock { $0.insert(image, cost: image.byteCount, for: key) }
    _ = gone  // released here, outside the lock: unmapping takes a system call
  }

  /// Removes the image for `key`.
  public func removeImage(forKey key: Key) {
    let gone = storage.withLock { $0.remove(key) }
    _ = gone
  }

  /// Removes every image; returns the bytes freed.
  @discardableResult
  public func removeAll() -> Int {
    Self.freedBytes(storage.withLock { $0.trim(toCost: 0) })
  }

  /// Trims the cache for a memory warning of `level` to the share of its cost limit that the
  /// level allows, least recently used first; returns the bytes freed (images still
  /// referenced elsewhere leave the cache but free nothing).
  @discardableResult
  public func purge(for level: MemoryPressure.Level) -> Int {
    Self.freedBytes(
      storage.withLock { $0.trim(toCost: level.retainedBytes(of: $0.costLimit)) })
  }

  /// The cost limit in bytes; lowering it evicts at once.
  public var costLimit: Int {
    get { storage.withLock { $0.costLimit } }
    set {
      let gone = storage.withLock { storage in
        storage.costLimit = max(0, newValue)
        return storage.trim(toCost: storage.costLimit, count: storage.countLimit)
      }
      _ = gone
    }
  }

  /// The counters and totals now.
  public var statistics: ImageCacheStatistics {
    storage.withLock {
      ImageCacheStatistics(
        count: $0.count, totalCost: $0.totalCost, costLimit: $0.costLimit, hits: $0.hits,
        misses: $0.misses, evictions: $0.evictions)
    }
  }

  private static func freedBytes(_ gone: [ImageCacheStorage<Key>.Evicted]) -> Int {
    gone.reduce(0) { $0 + ($1.wasLastReference ? $1.cost : 0) }
  }
}

/// An ``ImageCache``'s counters and totals at one moment.
public struct ImageCacheStatistics: Hashable, Sendable {
  /// Images cached.
  public var count: Int
  /// Their cost, in bytes; never above ``costLimit``.
  public var totalCost: Int
  /// The cost limit.
  public var costLimit: Int
  /// Look-ups that found an image.
  public var hits: Int
  /// Look-ups that found none.
  public var misses: Int
  /// Images evicted for the limits or for memory warnings.
  public var evictions: Int
}
