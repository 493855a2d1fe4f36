/// Which objects ``ObjectListWriter`` lists.
///
/// ```swift
/// ObjectListOptions(category: "MyApp.Image", liveAt: .seconds(2))
/// ```
public struct ObjectListOptions: Hashable, Sendable {
  /// Only objects of the category with this display name; `nil` for all.
  public var category: String?
  /// Only objects live at this time, in nanoseconds since the trace's start: allocated at or
  /// before it, and not freed by then. `nil` for all.
  public var liveAt: UInt64?

  /// Options for the objects of `category` live at `liveAt` after the trace's start.
  public init(category: String? = nil, liveAt: Duration? = nil) {
    self.category = category
    self.liveAt = liveAt.map(StatisticsOptions.nanoseconds)
  }
}
