/// A BACKING_ALLOC or BACKING_FREE record: memory that code mapped itself (outside malloc) and
/// reported through `Heapline.backingStore(allocated:category:id:)` or
/// `heapline_backing_alloc()`, and its release.
///
/// ```swift
/// if case .backingStore(let store) = event, store.kind == .allocated {
///   backingBytes += store.bytes
/// }
/// ```
public struct BackingStoreEvent: Hashable, Sendable {
  /// Whether the store was reported or released.
  public enum Kind: UInt8, Hashable, Sendable {
    /// The store was reported: it holds ``BackingStoreEvent/bytes`` from now on.
    case allocated
    /// The store was released.
    case released
  }

  /// Nanoseconds since the trace's start time.
  public var time: UInt64
  /// Reported or released.
  public var kind: Kind
  /// The store's id, chosen by the code that reports it (its address, say). Unique among live
  /// stores; a release names the store it ends by this id.
  public var id: UInt64
  /// The store's size. In a release, the size it was reported with (0 when the shim did not
  /// know the store).
  public var bytes: UInt64
  /// The store's category, named by a CATEGORY record of kind ``CategoryKind/backingStore``.
  public var category: CategoryID
  /// The reporting call stack; ``StackID/empty`` for a release.
  public var stack: StackID
  /// Serial of the thread that wrote the record.
  public var threadSerial: UInt32

  /// Creates a backing-store event.
  public init(
    time: UInt64, kind: Kind, id: UInt64, bytes: UInt64, category: CategoryID,
    stack: StackID = .empty, threadSerial: UInt32
  ) {
    self.time = time
    self.kind = kind
    self.id = id
    self.bytes = bytes
    self.category = category
    self.stack = stack
    self.threadSerial = threadSerial
  }
}
