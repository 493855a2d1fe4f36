import CHeapline

#if canImport(Glibc)
  import Glibc
#endif

/// Memory warnings: their levels, the observers that free memory when warned, and the ways to
/// raise one.
///
/// A warning comes from ``simulate(_:)`` (as Xcode's Simulate Memory Warning), from
/// `heapline record --warn-at`, from a signal sent to a recorded process
/// (`heapline record --warn-signal`), from a memory budget (`heapline record --memory-limit`:
/// warning, urgent and critical at 80, 90 and 95 %), or from the kernel's pressure stall
/// information (``monitorSystemPressure(stall:window:)``). Each one is a marker in the
/// timeline, and each observer's answer is in the trace and the report.
///
/// ```swift
/// let observation = MemoryPressure.addObserver(named: "thumbnails") { level in
///   thumbnails.trim(keeping: level.retainedBytes(of: thumbnails.costLimit))  // bytes freed
/// }
/// let freed = MemoryPressure.simulate(.warning)
/// observation.cancel()
/// ```
public enum MemoryPressure {
  /// How hard a warning asks the process to free memory.
  public enum Level: Int, Sendable, Comparable, CaseIterable, CustomStringConvertible {
    /// No pressure: nothing to free.
    case normal = 0
    /// Free what can be spared: caches keep half of their limit.
    case warning = 1
    /// Free more: caches keep a quarter of their limit.
    case urgent = 2
    /// Free everything that can be rebuilt: caches empty.
    case critical = 3

    /// What a cache with a limit of `limit` keeps at this level: all of it, half, a quarter,
    /// nothing. `ImageCache` in HeaplineImaging trims to this.
    ///
    /// ```swift
    /// MemoryPressure.Level.urgent.retainedBytes(of: 100)  // 25
    /// ```
    public func retainedBytes(of limit: Int) -> Int {
      switch self {
      case .normal: limit
      case .warning: limit / 2
      case .urgent: limit / 4
      case .critical: 0
      }
    }

    /// `normal`, `warning`, `urgent` or `critical`, as the trace names it.
    public var description: String {
      switch self {
      case .normal: "normal"
      case .warning: "warning"
      case .urgent: "urgent"
      case .critical: "critical"
      }
    }

    public static func < (lhs: Level, rhs: Level) -> Bool { lhs.rawValue < rhs.rawValue }
  }

  /// Registers `handler`, named `name` in traces and low-memory reports, until the returned
  /// observation is cancelled or released.
  ///
  /// The handler frees what it can for the level and returns the bytes it freed. It runs on
  /// the thread that calls ``simulate(_:)``, or on the shim's pressure thread for a warning
  /// from a signal, a timer, a budget or the kernel; so it must be thread-safe. At most 64
  /// observers are registered at once; beyond that, the observation is inactive.
  ///
  /// ```swift
  /// let observation = MemoryPressure.addObserver(named: "cache") { level in
  ///   cache.purge(for: level)
  /// }
  /// ```
  public static func addObserver(
    named name: String, _ handler: @escaping @Sendable (Level) -> Int
  ) -> MemoryPressureObservation {
    MemoryPressureObservation(name: name, handler: handler)
  }

  /// Raises a memory warning of `level` now, as Xcode's Simulate Memory Warning does: writes it
  /// to the trace when recording, runs every observer on this thread, and returns the bytes
  /// they freed together.
  ///
  /// ```swift
  /// let freed = MemoryPressure.simulate(.urgent)
  /// ```
  @discardableResult
  public static func simulate(_ level: Level = .warning) -> Int {
    Int(clamping: heapline_pressure_simulate(Int32(level.rawValue)))
  }

  /// Whether this kernel has pressure stall information for memory (`/proc/pressure/memory`).
  public static var isSystemPressureAvailable: Bool {
    access("/proc/pressure/memory", R_OK) == 0
  }

  /// Raises a warning each time tasks of this process's machine stall on memory for `stall`
  /// within `window`, as the kernel's pressure stall information reports (Linux 4.20 and
  /// later).
  ///
  /// ```swift
  /// if MemoryPressure.isSystemPressureAvailable {
  ///   try MemoryPressure.monitorSystemPressure(stall: .milliseconds(150), window: .seconds(1))
  /// }
  /// ```
  ///
  /// - Throws: ``HeaplineError/io(_:_:)`` with `ENOENT` when the kernel has no PSI, or with
  ///   the kernel's error for a trigger it refuses (windows from 0.5 to 10 s; unprivileged
  ///   processes need a multiple of 2 s).
  public static func monitorSystemPressure(
    stall: Duration = .milliseconds(150), window: Duration = .seconds(1)
  ) throws {
    let trigger = "some \(microseconds(stall)) \(microseconds(window))"
    let err = trigger.withCString { heapline_pressure_monitor_psi($0) }
    guard err == 0 else { throw HeaplineError.io("watching /proc/pressure/memory", err) }
  }

  /// Stops ``monitorSystemPressure(stall:window:)``; does nothing when it is not running.
  public static func stopMonitoringSystemPressure() {
    heapline_pressure_stop_psi()
  }

  private static func microseconds(_ duration: Duration) -> Int64 {
    let (seconds, attoseconds) = duration.components
    return seconds * 1_000_000 + attoseconds / 1_000_000_000_000
  }
}
