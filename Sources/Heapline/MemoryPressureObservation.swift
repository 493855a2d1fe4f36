import CHeapline
import Synchronization

/// A registered memory-pressure observer; ``MemoryPressure/addObserver(named:_:)`` returns it.
/// The observer runs until ``cancel()`` is called or the observation is released.
///
/// ```swift
/// final class Thumbnails {
///   private var observation: MemoryPressureObservation?
///   init() {
///     observation = MemoryPressure.addObserver(named: "thumbnails") { [weak self] level in
///       self?.purge(level) ?? 0
///     }
///   }
/// }
/// ```
public final class MemoryPressureObservation: Sendable {
  /// The name the observer was registered under.
  public let name: String
  private let box: ObserverBox
  /// The shim's token while registered; -1 once cancelled, or when the table was full.
  private let token: Mutex<Int32>

  init(name: String, handler: @escaping @Sendable (MemoryPressure.Level) -> Int) {
    self.name = name
    let box = ObserverBox(handler)
    self.box = box
    // The shim holds the box unretained: this observation keeps it alive until it has
    // unregistered, and unregistering waits for a round of observers in progress.
    let context = Unmanaged.passUnretained(box).toOpaque()
    token = Mutex(name.withCString { heapline_pressure_add_observer($0, trampoline, context) })
  }

  /// Whether the observer is registered and will run at the next warning.
  public var isActive: Bool { token.withLock { $0 > 0 } }

  /// Unregisters the observer. When this returns, it is not running and will not run again
  /// (unless this is called from inside it).
  public func cancel() {
    let old = token.withLock { token in
      defer { token = -1 }
      return token
    }
    if old > 0 { heapline_pressure_remove_observer(old) }
  }

  deinit { cancel() }
}

/// The Swift handler, which the shim calls back through `trampoline`.
private final class ObserverBox: Sendable {
  let handler: @Sendable (MemoryPressure.Level) -> Int
  init(_ handler: @escaping @Sendable (MemoryPressure.Level) -> Int) { self.handler = handler }
}

/// Calls an observation's handler for the shim, with the bytes freed (negative counts as 0).
private let trampoline: @convention(c) (Int32, UnsafeMutableRawPointer?) -> UInt64 = {
  level, context in
  guard let context else { return 0 }
  let box = Unmanaged<ObserverBox>.fromOpaque(context).takeUnretainedValue()
  let freed = box.handler(MemoryPressure.Level(rawValue: Int(level)) ?? .warning)
  return UInt64(max(0, freed))
}
