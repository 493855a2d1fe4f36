import HeaplineTrace

/// Memory outside malloc that the program reported (decoded images, mapped buffers): totals,
/// one row per category, and the stacks that reported the most.
///
/// ```swift
/// let stats = try Statistics(contentsOf: "app.trace")
/// stats.backingStores.liveBytes                                   // at the end
/// stats.backingStores.category(named: "Decoded images")?.peakBytes
/// ```
public struct BackingStoreStatistics: Hashable, Sendable {
  /// Bytes in stores reported and not released, at the end.
  public var liveBytes: UInt64 = 0
  /// Stores reported and not released, at the end.
  public var liveCount: UInt64 = 0
  /// The most bytes in backing stores at any moment.
  public var peakBytes: UInt64 = 0
  /// When backing stores first reached ``peakBytes``; `nil` without any.
  public var peakTime: UInt64?
  /// Bytes of every store reported.
  public var totalBytes: UInt64 = 0
  /// Stores reported.
  public var totalCount: UInt64 = 0
  /// Releases of stores the trace never saw reported (reported before recording began).
  public var unmatchedReleaseCount: UInt64 = 0
  /// One row per category, by persistent bytes then total bytes, largest first.
  public var categories: [BackingStoreCategoryStatistics] = []
  /// The reporting stacks that held the most at the backing-store peak, largest first.
  public var topStacks: [StackStatistics] = []

  /// No backing stores.
  public init() {}

  /// The category with this name.
  public func category(named name: String) -> BackingStoreCategoryStatistics? {
    categories.first { $0.name == name }
  }
}

/// One category of backing stores, with the Object Alloc columns and its own peak.
public struct BackingStoreCategoryStatistics: Hashable, Sendable {
  /// The category's id.
  public var id: CategoryID
  /// The name it was reported under.
  public var name: String
  /// Bytes live at the end.
  public var persistentBytes: UInt64
  /// Stores live at the end.
  public var persistentCount: UInt64
  /// Stores reported and released.
  public var transientCount: UInt64
  /// Bytes of all stores reported.
  public var totalBytes: UInt64
  /// All stores reported.
  public var totalCount: UInt64
  /// The most bytes this category held at once.
  public var peakBytes: UInt64

  /// Creates a row.
  public init(
    id: CategoryID, name: String, persistentBytes: UInt64, persistentCount: UInt64,
    transientCount: UInt64, totalBytes: UInt64, totalCount: UInt64, peakBytes: UInt64
  ) {
    self.id = id
    self.name = name
    self.persistentBytes = persistentBytes
    self.persistentCount = persistentCount
    self.transientCount = transientCount
    self.totalBytes = totalBytes
    self.totalCount = totalCount
    self.peakBytes = peakBytes
  }
}
