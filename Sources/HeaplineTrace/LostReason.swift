/// Why the shim could not record some allocations and frees (a LOST record's reason).
public struct LostReason: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The reason code as written.
  public var rawValue: UInt8
  /// Wraps a reason code.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// The shim could not map memory for its tables (`ulimit -v`, say): an allocation it could
  /// not record, or a block it could not track, whose free it will not see.
  public static let outOfMemory = LostReason(rawValue: 1)
  /// A signal handler allocated while its thread was inside the shim, more often than the
  /// shim's queue for such calls holds.
  public static let signalHandler = LostReason(rawValue: 2)
  /// A call came while its thread was inside the shim's own work.
  public static let insideShim = LostReason(rawValue: 3)

  /// A few words for reports.
  public var description: String {
    switch self {
    case .outOfMemory: "the shim could not map memory"
    case .signalHandler: "signal handlers interrupting the shim"
    case .insideShim: "calls made inside the shim's own work"
    default: "reason \(rawValue)"
    }
  }
}
