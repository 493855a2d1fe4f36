/// The bounds the page aggregates to, so that its size does not grow with the trace.
///
/// ```swift
/// var options = HTMLPageOptions()
/// options.timelinePoints = 240
/// ```
public struct HTMLPageOptions: Hashable, Sendable {
  /// About how many time steps the timeline has (one more at the peak, and at the end).
  public var timelinePoints = 480
  /// The categories the timeline stacks, the others summed as one.
  public var timelineCategories = 8
  /// Timeline steps per bucket of the grid that instants and ranges snap to (about
  /// `timelinePoints / bucketSteps` buckets).
  public var bucketSteps = 8
  /// The most cells of the grid of instants and ranges: beyond, its buckets are merged two by
  /// two (each cell is about 25 bytes of the page).
  public var gridCells = 60_000
  /// The stacks kept for each weight of the call tree; the page keeps the union, and sums the
  /// rest into an "other" row.
  public var stacksPerWeight = 60
  /// The categories kept for each of bytes at the peak, persistent bytes and total bytes, in
  /// the figures of instants and ranges; the rest are summed as one.
  public var categoriesPerColumn = 16
  /// The top stacks of the embedded report, as `report --top`.
  public var reportStacks = 20
  /// The leak groups listed; the totals count all of them.
  public var leakGroups = 100
  /// How frames are named and which are shown: by default the user's frames, with simplified
  /// names, as `report` prints them.
  public var frameStyle = FrameStyle()

  /// The default bounds, which keep a page of a 2 M-event trace under a few megabytes.
  public init() {}
}
