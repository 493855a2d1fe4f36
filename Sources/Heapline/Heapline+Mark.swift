import CHeapline

extension Heapline {
  /// Writes a mark named `name` at this instant: a generation boundary, which
  /// ``Recording/growth(from:to:)``, ``Recording/generations`` and `heapline diff --from --to`
  /// use, and which the timeline shows in its `marker` column.
  ///
  /// ```swift
  /// let recording = try Heapline.record {
  ///   loadSlides()
  ///   Heapline.mark("before slideshow")
  ///   runSlideshow()
  ///   Heapline.mark("after slideshow")
  /// }
  /// let growth = try recording.growth(from: "before slideshow", to: "after slideshow")
  /// #expect(growth.bytes < 64 * 1024)
  /// ```
  ///
  /// Does nothing when no recording is running.
  public static func mark(_ name: String) {
    name.withCString { heapline_mark($0) }
  }
}
