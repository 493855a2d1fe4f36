import HeaplineTrace

/// The blocks of one category that a ``Growth`` or a ``Generation`` holds.
public struct CategoryGrowth: Hashable, Sendable {
  /// The category's id.
  public var id: CategoryID
  /// What the category stands for.
  public var kind: CategoryKind
  /// `Malloc 48 Bytes`, a Swift type, a scope name.
  public var name: String
  /// Blocks.
  public var count: UInt64
  /// Bytes.
  public var bytes: UInt64

  /// Creates a category's figures.
  public init(id: CategoryID, kind: CategoryKind, name: String, count: UInt64, bytes: UInt64) {
    self.id = id
    self.kind = kind
    self.name = name
    self.count = count
    self.bytes = bytes
  }
}
