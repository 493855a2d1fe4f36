/// Live and total figures of one stack or one category, with its value at the global peak.
///
/// Copying every counter each time the live total reaches a new peak would cost O(counters)
/// per event early in a run, when new peaks come with almost every allocation. Instead each
/// peak opens a new *epoch*, and a counter saves its live bytes lazily, just before its first
/// change in a new epoch. At the end, a counter whose last save belongs to the final epoch
/// held the saved value at the peak; any other counter has not changed since the peak.
struct UsageCounter {
  var liveBytes: UInt64 = 0
  var liveCount: UInt64 = 0
  var totalBytes: UInt64 = 0
  var totalCount: UInt64 = 0
  /// Blocks live when a rotated file began (see ``carry(_:count:epoch:)``).
  var carriedCount: UInt64 = 0
  private var savedEpoch: UInt64 = 0
  private var savedBytes: UInt64 = 0

  /// `count` is 1, or a sampled trace's weight in 1/``SampleWeight/countScale``ths.
  mutating func allocate(_ size: UInt64, count: UInt64 = 1, epoch: UInt64) {
    saveIfNeeded(epoch: epoch)
    liveBytes &+= size
    liveCount &+= count
    totalBytes &+= size
    totalCount &+= count
  }

  /// A block live when a rotated file began: live, but not one of the file's allocations.
  mutating func carry(_ size: UInt64, count: UInt64 = 1, epoch: UInt64) {
    saveIfNeeded(epoch: epoch)
    liveBytes &+= size
    liveCount &+= count
    carriedCount &+= count
  }

  mutating func release(_ size: UInt64, count: UInt64 = 1, epoch: UInt64) {
    saveIfNeeded(epoch: epoch)
    liveBytes &-= size
    liveCount &-= count
  }

  /// Live bytes at the peak that opened `finalEpoch`.
  func bytesAtPeak(finalEpoch: UInt64) -> UInt64 {
    savedEpoch == finalEpoch ? savedBytes : liveBytes
  }

  private mutating func saveIfNeeded(epoch: UInt64) {
    guard savedEpoch != epoch else { return }
    savedEpoch = epoch
    savedBytes = liveBytes
  }
}
