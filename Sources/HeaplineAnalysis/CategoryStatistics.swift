import HeaplineTrace

/// One category's row of the Object Alloc table.
///
/// Persistent blocks are live at the end; transient ones were freed before it.
public struct CategoryStatistics: Hashable, Sendable {
  /// The category's id.
  public var id: CategoryID
  /// What the category stands for.
  public var kind: CategoryKind
  /// `Malloc 48 Bytes`, a Swift type, a scope name.
  public var name: String
  /// Bytes live at the end.
  public var persistentBytes: UInt64
  /// Blocks live at the end.
  public var persistentCount: UInt64
  /// Blocks allocated and freed.
  public var transientCount: UInt64
  /// Bytes of all allocations.
  public var totalBytes: UInt64
  /// All allocations.
  public var totalCount: UInt64
  /// Bytes live at the moment of the global peak.
  public var bytesAtPeak: UInt64

  /// Creates a row.
  public init(
    id: CategoryID, kind: CategoryKind, name: String, persistentBytes: UInt64,
    persistentCount: UInt64, transientCount: UInt64, totalBytes: UInt64, totalCount: UInt64,
    bytesAtPeak: UInt64
  ) {
    self.id = id
    self.kind = kind
    self.name = name
    self.persistentBytes = persistentBytes
    self.persistentCount = persistentCount
    self.transientCount = transientCount
    self.totalBytes = totalBytes
    self.totalCount = totalCount
    self.bytesAtPeak = bytesAtPeak
  }
}
