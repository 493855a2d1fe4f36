import CHeapline

extension Heapline {
  /// Reports `bytes` of memory that this code mapped itself, outside malloc, under `category`,
  /// until ``backingStore(released:)`` is called with the same `id`.
  ///
  /// A malloc tracker never sees an `mmap`'d pixel buffer, so the process looks far bigger than
  /// malloc says. Reported stores appear in the trace, in the report (per category), in the
  /// timeline's `backing_store_bytes` column and in the footprint, and count against
  /// `heapline record --memory-limit`. They are counted whether or not a recording runs.
  ///
  /// ```swift
  /// let pixels = mmap(nil, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)!
  /// let id = UInt64(UInt(bitPattern: pixels))
  /// Heapline.backingStore(allocated: size, category: "Decoded images", id: id)
  /// …
  /// Heapline.backingStore(released: id)
  /// munmap(pixels, size)
  /// ```
  ///
  /// - Parameters:
  ///   - bytes: the store's size; a negative size counts as 0.
  ///   - category: the name it is counted under.
  ///   - id: names the store until its release (its address will do); unique among live
  ///     stores. Reporting a live id again replaces that store.
  public static func backingStore(allocated bytes: Int, category: String, id: UInt64) {
    // The string passed straight as a C string, not through withCString: no closure frames
    // at the top of the stack that the trace records for the store.
    heapline_backing_alloc(id, UInt64(max(0, bytes)), category)
  }

  /// Reports that the backing store `id` was released. Returns the bytes it had, 0 when no
  /// store has that id.
  @discardableResult
  public static func backingStore(released id: UInt64) -> Int {
    Int(clamping: heapline_backing_free(id))
  }

  /// The bytes and the number of backing stores reported now under `category`, recording or
  /// not (at most `Int.max`).
  ///
  /// ```swift
  /// let (bytes, stores) = Heapline.backingStoreBytes(inCategory: "Decoded images")
  /// ```
  public static func backingStoreBytes(inCategory category: String) -> (bytes: Int, stores: Int) {
    var stores: UInt64 = 0
    let bytes = category.withCString { heapline_backing_bytes($0, &stores) }
    return (Int(clamping: bytes), Int(clamping: stores))
  }

  /// The bytes and the number of all backing stores reported now (at most `Int.max`).
  public static var backingStoreBytes: (bytes: Int, stores: Int) {
    var stores: UInt64 = 0
    let bytes = heapline_backing_bytes(nil, &stores)
    return (Int(clamping: bytes), Int(clamping: stores))
  }
}
