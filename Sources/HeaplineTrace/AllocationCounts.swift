/// A COUNTS record: what one thread allocated and freed since its previous one, every call
/// counted, in a trace recorded in sampling mode (`heapline record --sample-bytes`).
///
/// A free cannot know the size its block was asked for, so live bytes are counted in usable
/// bytes (`malloc_usable_size`) on both sides; the requested bytes allocated are counted too.
///
/// ```swift
/// if case .memory(let event) = event, case .counts(let counts) = event.detail {
///   live += Int64(counts.usableBytesAllocated) - Int64(counts.usableBytesFreed)
/// }
/// ```
public struct AllocationCounts: Hashable, Sendable {
  /// Allocations, sampled or not.
  public var allocations: UInt64
  /// Frees of blocks, sampled or not.
  public var frees: UInt64
  /// Bytes the allocations asked for.
  public var requestedBytes: UInt64
  /// Usable bytes of the blocks allocated.
  public var usableBytesAllocated: UInt64
  /// Usable bytes of the blocks freed.
  public var usableBytesFreed: UInt64

  /// Creates the record's content.
  public init(
    allocations: UInt64, frees: UInt64, requestedBytes: UInt64, usableBytesAllocated: UInt64,
    usableBytesFreed: UInt64
  ) {
    self.allocations = allocations
    self.frees = frees
    self.requestedBytes = requestedBytes
    self.usableBytesAllocated = usableBytesAllocated
    self.usableBytesFreed = usableBytesFreed
  }
}
