/// A WARNING record: one memory warning, numbered, with its level and where it came from.
///
/// The shim writes it right after the warning's MARK of kind 2, and the observers' answers
/// (``WarningResponse``) after it, under the same ``serial``.
public struct MemoryWarning: Hashable, Sendable {
  /// The warning's number in the process: 1, 2, 3…
  public var serial: UInt32
  /// How hard the process is asked to free memory.
  public var level: PressureLevel
  /// What raised the warning.
  public var source: WarningSource
  /// The footprint (RSS) when the warning was raised, in bytes.
  public var footprintBytes: UInt64
  /// The memory budget in force, in bytes; `nil` without one.
  public var limitBytes: UInt64?

  /// Creates a warning.
  public init(
    serial: UInt32, level: PressureLevel, source: WarningSource, footprintBytes: UInt64,
    limitBytes: UInt64? = nil
  ) {
    self.serial = serial
    self.level = level
    self.source = source
    self.footprintBytes = footprintBytes
    self.limitBytes = limitBytes
  }
}

/// A WARNING_RESPONSE record: the bytes one observer said it freed for warning ``serial``.
public struct WarningResponse: Hashable, Sendable {
  /// The ``MemoryWarning/serial`` of the warning answered.
  public var serial: UInt32
  /// The observer's name, as it registered.
  public var observer: String {
    get { observerText.string }
    set { observerText = EventText(newValue) }
  }
  private var observerText: EventText
  /// The bytes it freed.
  public var freedBytes: UInt64

  /// Creates a response.
  public init(serial: UInt32, observer: String, freedBytes: UInt64) {
    self.serial = serial
    self.observerText = EventText(observer)
    self.freedBytes = freedBytes
  }
}

/// The level of a memory warning. A struct rather than an enum so that a newer shim's level
/// still reads.
public struct PressureLevel: RawRepresentable, Hashable, Comparable, Sendable,
  CustomStringConvertible
{
  /// The level byte as written.
  public var rawValue: UInt8
  /// Wraps a level byte.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// No pressure.
  public static let normal = PressureLevel(rawValue: 0)
  /// Free what can be spared (80 % of a budget).
  public static let warning = PressureLevel(rawValue: 1)
  /// Free more (90 % of a budget).
  public static let urgent = PressureLevel(rawValue: 2)
  /// Free everything that can be rebuilt (95 % of a budget).
  public static let critical = PressureLevel(rawValue: 3)

  /// `normal`, `warning`, `urgent` or `critical`: the name of the warning's MARK.
  public var description: String {
    switch rawValue {
    case 0: "normal"
    case 1: "warning"
    case 2: "urgent"
    case 3: "critical"
    default: "level_\(rawValue)"
    }
  }

  public static func < (lhs: PressureLevel, rhs: PressureLevel) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}

/// What raised a memory warning.
public struct WarningSource: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The source byte as written.
  public var rawValue: UInt8
  /// Wraps a source byte.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// `MemoryPressure.simulate(_:)` or `heapline_pressure_simulate()`.
  public static let simulated = WarningSource(rawValue: 1)
  /// `heapline record --warn-at`.
  public static let timer = WarningSource(rawValue: 2)
  /// A signal sent to the process (`heapline record --warn-signal`).
  public static let signal = WarningSource(rawValue: 3)
  /// A threshold of the memory budget (`heapline record --memory-limit`).
  public static let memoryLimit = WarningSource(rawValue: 4)
  /// The kernel's pressure stall information (`/proc/pressure/memory`).
  public static let psi = WarningSource(rawValue: 5)

  /// A stable snake_case name, used by the JSON report.
  public var description: String {
    switch rawValue {
    case 1: "simulated"
    case 2: "timer"
    case 3: "signal"
    case 4: "memory_limit"
    case 5: "psi"
    default: "source_\(rawValue)"
    }
  }
}
