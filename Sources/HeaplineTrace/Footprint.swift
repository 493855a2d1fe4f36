/// A FOOTPRINT record: the resident set size, and what accounts for it, at one moment.
///
/// RSS = malloc live bytes + malloc overhead + backing stores + the rest. The rest is what
/// nothing reported: code and data of loaded modules, thread stacks, malloc's free lists
/// (``allocatorFreeBytes`` gives those), other mappings. It can be negative: memory that was
/// allocated or mapped but never touched is counted by the first three and not by RSS.
///
/// ```swift
/// let footprint: Footprint = …
/// print(footprint.mallocOverheadBytes, footprint.unaccountedBytes)
/// ```
public struct Footprint: Hashable, Sendable {
  /// Why the shim wrote the record.
  public struct Reason: RawRepresentable, Hashable, Sendable {
    /// The reason byte as written.
    public var rawValue: UInt8
    /// Wraps a reason byte.
    public init(rawValue: UInt8) { self.rawValue = rawValue }
    /// The recording ended: the process exited or the API stopped it.
    public static let end = Reason(rawValue: 1)
    /// The memory budget was exceeded and the process is being killed.
    public static let memoryLimit = Reason(rawValue: 2)
  }

  /// Why it was written.
  public var reason: Reason
  /// The resident set size, in bytes.
  public var residentBytes: UInt64
  /// Bytes requested by the live malloc blocks the recording saw.
  public var mallocLiveBytes: UInt64
  /// The sum of `malloc_usable_size` over those blocks.
  public var mallocUsableBytes: UInt64
  /// The number of those blocks.
  public var mallocLiveBlocks: UInt64
  /// Bytes in the backing stores reported and not released (whether or not the recording
  /// saw them reported).
  public var backingStoreBytes: UInt64
  /// Free bytes that malloc holds in its arenas (`mallinfo2().fordblks`).
  public var allocatorFreeBytes: UInt64

  /// Creates a footprint.
  public init(
    reason: Reason, residentBytes: UInt64, mallocLiveBytes: UInt64, mallocUsableBytes: UInt64,
    mallocLiveBlocks: UInt64, backingStoreBytes: UInt64, allocatorFreeBytes: UInt64
  ) {
    self.reason = reason
    self.residentBytes = residentBytes
    self.mallocLiveBytes = mallocLiveBytes
    self.mallocUsableBytes = mallocUsableBytes
    self.mallocLiveBlocks = mallocLiveBlocks
    self.backingStoreBytes = backingStoreBytes
    self.allocatorFreeBytes = allocatorFreeBytes
  }

  /// Usable size minus requested size: what malloc's rounding costs the live blocks.
  public var mallocOverheadBytes: UInt64 {
    mallocUsableBytes >= mallocLiveBytes ? mallocUsableBytes - mallocLiveBytes : 0
  }

  /// RSS minus malloc's live bytes, its overhead and the backing stores.
  public var unaccountedBytes: Int64 {
    Int64(clamping: residentBytes) - Int64(clamping: mallocUsableBytes)
      - Int64(clamping: backingStoreBytes)
  }
}
