import Synchronization

/// Where the process last read a trace, for a progress line that another thread shows.
///
/// Every read of a trace file records where it ended and the file's size. An analysis that
/// passes over the file more than once (indexing, then events) goes from 0 to 100 % per pass.
package enum TraceReadProgress {
  private static let position = Atomic<UInt64>(0)
  private static let size = Atomic<UInt64>(0)

  /// Records a read that ended at `end` of a file of `fileSize` bytes.
  static func record(end: UInt64, fileSize: UInt64) {
    position.store(end, ordering: .relaxed)
    size.store(fileSize, ordering: .relaxed)
  }

  /// The end of the latest read and the size of its file; (0, 0) before any read.
  package static var current: (position: UInt64, fileSize: UInt64) {
    (position.load(ordering: .relaxed), size.load(ordering: .relaxed))
  }
}
