/// A leak scan that could not run (LEAK_FAILED, tag `0x16`), so that a trace without scans can
/// say why it has none.
public struct LeakScanFailure: Hashable, Sendable {
  /// Nanoseconds since the file's start time, when the scan was to begin.
  public var time: UInt64
  /// What asked for the scan.
  public var trigger: LeakScan.Trigger
  /// The shim's error number for the failure.
  public var errorNumber: UInt64

  /// A failure as its record gives it.
  public init(time: UInt64, trigger: LeakScan.Trigger, errorNumber: UInt64) {
    self.time = time
    self.trigger = trigger
    self.errorNumber = errorNumber
  }

  /// Why the scan did not run, as the shim also words it on stderr.
  public var reason: String {
    switch errorNumber {
    case 110: "the program's threads could not be stopped in time"
    case 75: "a block lies above 2^48, past what the scan can index"
    case 5: "the program's threads could not be listed (/proc/self/task)"
    case 12: "no memory for the scan"
    case 13:
      "the program installed a seccomp filter that would kill it for a system call of the scan"
        + " (or one the shim could not read)"
    default: "error \(errorNumber)"
    }
  }
}
