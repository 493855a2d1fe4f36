import HeaplineTrace

/// Why the process is bigger than malloc says: RSS reconciled with malloc's live bytes, malloc's
/// overhead, the backing stores, and the rest that nothing accounts for.
///
/// It comes from the trace's last FOOTPRINT record when the statistics reach it (the shim
/// writes one at the end of a recording, and at a memory-limit kill). Otherwise, for a trace
/// cut short or statistics stopped early, it is estimated from the statistics themselves and
/// the last RSS sample, and malloc's overhead is unknown.
///
/// ```swift
/// let footprint = stats.footprint
/// print(footprint.residentBytes, footprint.mallocLiveBytes, footprint.backingStoreBytes)
/// ```
public struct FootprintBreakdown: Hashable, Sendable {
  /// When the figures hold, in nanoseconds since the trace's start.
  public var time: UInt64
  /// Whether they come from a FOOTPRINT record (`true`) or are estimated.
  public var isMeasured: Bool
  /// The resident set size; `nil` without any sample.
  public var residentBytes: UInt64?
  /// Bytes requested by the live malloc blocks.
  public var mallocLiveBytes: UInt64
  /// Live blocks.
  public var mallocLiveBlocks: UInt64
  /// Usable minus requested size of those blocks; `nil` when not measured.
  public var mallocOverheadBytes: UInt64?
  /// Bytes in reported backing stores.
  public var backingStoreBytes: UInt64
  /// Free bytes that malloc keeps in its arenas; `nil` when not measured.
  public var allocatorFreeBytes: UInt64?

  /// Creates a breakdown.
  public init(
    time: UInt64, isMeasured: Bool, residentBytes: UInt64?, mallocLiveBytes: UInt64,
    mallocLiveBlocks: UInt64, mallocOverheadBytes: UInt64?, backingStoreBytes: UInt64,
    allocatorFreeBytes: UInt64?
  ) {
    self.time = time
    self.isMeasured = isMeasured
    self.residentBytes = residentBytes
    self.mallocLiveBytes = mallocLiveBytes
    self.mallocLiveBlocks = mallocLiveBlocks
    self.mallocOverheadBytes = mallocOverheadBytes
    self.backingStoreBytes = backingStoreBytes
    self.allocatorFreeBytes = allocatorFreeBytes
  }

  /// The breakdown a FOOTPRINT record gives.
  public init(time: UInt64, footprint: Footprint) {
    self.init(
      time: time, isMeasured: true, residentBytes: footprint.residentBytes,
      mallocLiveBytes: footprint.mallocLiveBytes, mallocLiveBlocks: footprint.mallocLiveBlocks,
      mallocOverheadBytes: footprint.mallocOverheadBytes,
      backingStoreBytes: footprint.backingStoreBytes,
      allocatorFreeBytes: footprint.allocatorFreeBytes)
  }

  /// RSS minus what accounts for it (live bytes, overhead, backing stores): code, stacks,
  /// malloc's free lists and other mappings. Negative when allocated memory was never touched.
  /// `nil` without an RSS sample.
  public var unaccountedBytes: Int64? {
    guard let residentBytes else { return nil }
    return Int64(clamping: residentBytes) - Int64(clamping: mallocLiveBytes)
      - Int64(clamping: mallocOverheadBytes ?? 0) - Int64(clamping: backingStoreBytes)
  }
}
