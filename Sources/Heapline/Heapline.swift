import CHeapline
import HeaplineAnalysis
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

/// Heapline's in-process API: record this process's allocations from a Swift test or a program.
///
/// ```swift
/// let recording = try Heapline.record {
///   let images = (0..<100).map { _ in Thumbnail() }
///   keep(images)
/// }
/// let thumbnails = recording.statistics.category(named: "MyApp.Thumbnail")
/// #expect(thumbnails?.persistentCount == 100)
/// ```
public enum Heapline {
  /// Whether the calling task (or thread) runs inside a recording's body: a nested
  /// ``record(to:depth:_:)->_`` then fails at once rather than wait for its own turn. A task-local,
  /// since an `async` body may resume on any thread.
  @TaskLocal static var isInsideRecording = false

  /// Records every allocation that any thread of this process makes while `body` runs, and
  /// returns the statistics of that extent: the same figures `heapline report` prints.
  ///
  /// Only one recording runs at a time in a process. A call from another thread waits for the
  /// running one to end (tests that record run in parallel); a call from inside `body`, or
  /// while a recording started otherwise is running, throws ``HeaplineError/alreadyRecording``.
  /// To keep what `body` returns as well, use ``record(to:depth:_:)-3ew74``.
  /// - Parameters:
  ///   - path: where the trace goes; by default a temporary file, removed once read.
  ///   - depth: the maximum number of frames in a stack.
  ///   - body: the work to record, run on the calling thread.
  /// - Throws: what `body` throws; ``HeaplineError/writeFailed(path:errno:)`` when a write to
  ///   the trace failed (a full disk); ``HeaplineError/io(_:_:)`` when the trace cannot be
  ///   created. A temporary trace is removed in every case.
  public static func record(
    to path: String? = nil, depth: Int = 64, _ body: () throws -> Void
  ) throws -> Recording {
    try recording(to: path, depth: depth, body).recording
  }

  /// Records every allocation made while `body` runs, and returns what `body` returned with
  /// the recording.
  ///
  /// ```swift
  /// let (thumbnails, recording) = try Heapline.record {
  ///   (0..<100).map { _ in Thumbnail() }
  /// }
  /// ```
  ///
  /// Turns, errors and the trace are as ``record(to:depth:_:)->_`` has them.
  public static func record<T>(
    to path: String? = nil, depth: Int = 64, _ body: () throws -> T
  ) throws -> (value: T, recording: Recording) {
    try recording(to: path, depth: depth, body)
  }

  /// Both synchronous `record`s, under a name of its own that no overload can capture.
  private static func recording<T>(
    to path: String?, depth: Int, _ body: () throws -> T
  ) throws -> (value: T, recording: Recording) {
    guard !isInsideRecording else { throw HeaplineError.alreadyRecording }
    RecordingTurn.shared.take()
    defer { RecordingTurn.shared.give() }
    let session = try Session(path: path, depth: depth)
    let value: T
    do {
      value = try $isInsideRecording.withValue(true) { try body() }
    } catch {
      session.abandon()
      throw error
    }
    return (value, try session.finish())
  }

  /// Records every allocation that any thread makes while the `async` body runs, wherever it
  /// suspends and resumes, and returns what `body` returned with the recording.
  ///
  /// ```swift
  /// let (page, recording) = try await Heapline.record {
  ///   try await client.fetchPage(1)
  /// }
  /// ```
  ///
  /// A call that must wait for another recording to end suspends, without blocking its
  /// thread. A call from inside `body`, or from a task that `body` started, throws
  /// ``HeaplineError/alreadyRecording``. Otherwise as ``record(to:depth:_:)->_``.
  public static func record<T>(
    to path: String? = nil, depth: Int = 64, _ body: () async throws -> T
  ) async throws -> (value: T, recording: Recording) {
    guard !isInsideRecording else { throw HeaplineError.alreadyRecording }
    // Synchronous callers wait for the turn by blocking their threads, which may be all the
    // threads of the cooperative pool: the async recording waits, runs and ends on a thread of
    // its own (with the child tasks it starts), which they cannot starve.
    let executor = try ThreadExecutor()
    defer { executor.finish() }
    return try await withTaskExecutorPreference(executor) {
      await RecordingTurn.shared.take()
      defer { RecordingTurn.shared.give() }
      let session = try Session(path: path, depth: depth)
      let value: T
      do {
        value = try await $isInsideRecording.withValue(true) { try await body() }
      } catch {
        session.abandon()
        throw error
      }
      return (value, try session.finish())
    }
  }

  /// One recording from start to end: its trace file, removed on every way out until a
  /// ``Recording`` owns it.
  private final class Session {
    let path: String
    let isTemporary: Bool
    private var owned: Bool

    init(path: String?, depth: Int) throws {
      self.path = try path ?? Heapline.temporaryTracePath()
      isTemporary = path == nil
      owned = isTemporary
      do {
        try Heapline.start(path: self.path, depth: depth)
      } catch {
        // Not ours to stop: a recording started otherwise may be running (EBUSY).
        if owned { unlink(self.path) }
        throw error
      }
    }

    /// Stops recording after `body` threw; the error to report is `body`'s.
    func abandon() {
      _ = heapline_stop()
      if owned { unlink(path) }
      owned = false
    }

    func finish() throws -> Recording {
      do {
        try Heapline.stop(path: path)
      } catch {
        if owned { unlink(path) }
        owned = false
        throw error
      }
      owned = false
      // A temporary trace lives as long as the recording, for its timeline and generations.
      return try Recording(path: path, isTemporary: isTemporary)
    }
  }

  /// Runs `body` with `name` as the category of everything this thread allocates inside it,
  /// as Instruments shows a named region. Scopes nest; the innermost wins.
  public static func category<T>(_ name: String, _ body: () throws -> T) rethrows -> T {
    let token = name.withCString { heapline_scope_push($0) }
    defer { heapline_scope_pop(token) }
    return try body()
  }

  /// The bytes and blocks live now in the category of a named scope, straight from the shim's
  /// live table; zero when nothing is recording.
  public static func liveBytes(inCategory name: String) -> (bytes: UInt64, blocks: UInt64) {
    var blocks: UInt64 = 0
    let bytes = name.withCString { heapline_scope_live_bytes($0, &blocks) }
    return (bytes, blocks)
  }

  private static func start(path: String, depth: Int) throws {
    guard (1...256).contains(depth) else { throw HeaplineError.invalidDepth(depth) }
    let err = path.withCString { heapline_start($0, UInt32(depth)) }
    switch err {
    case 0: return
    case EBUSY: throw HeaplineError.alreadyRecording
    default: throw HeaplineError.io("writing the trace to '\(path)'", err)
    }
  }

  /// Stops the recording. The shim stops a recording itself when a write to the trace fails
  /// (a full disk): `heapline_stop` then finds nothing recording (EINVAL), and the trace has no
  /// trailer; a shim that keeps the write's errno returns that instead.
  private static func stop(path: String) throws {
    let stopped = heapline_stop()
    if stopped == 0 { return }
    if stopped == EINVAL {
      // Stopped from inside the body, through the C API: the trace is whole.
      if (try? TraceReader(path: path))?.isComplete == true { return }
      throw HeaplineError.writeFailed(path: path, errno: nil)
    }
    throw HeaplineError.writeFailed(path: path, errno: stopped)
  }

  private static func temporaryTracePath() throws -> String {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(directory)/heapline-XXXXXX.trace".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemps($0.baseAddress!, 6) }
    guard fd >= 0 else {
      throw HeaplineError.io("creating a temporary trace in '\(directory)'", errno)
    }
    close(fd)
    return String(
      decoding: template.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

extension Heapline {
  /// Writes `line` and a newline to stderr, in one write: the API's word when it cannot throw
  /// (a wait for a turn that may never come, notes past the shim's room).
  static func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(STDERR_FILENO, $0.baseAddress, $0.count) }
  }
}

/// What can go wrong when recording in process.
public enum HeaplineError: Error, CustomStringConvertible {
  /// Another recording is running in this process.
  case alreadyRecording
  /// The depth is not from 1 to 256.
  case invalidDepth(Int)
  /// The trace could not be written: what was being done, and the errno value.
  case io(String, Int32)
  /// No recording is running, so there is nothing to scan for leaks.
  case notRecording
  /// A write to the trace failed (a full disk, a file size limit), so the recording stopped
  /// early; the trace holds what was written before. The errno value, when the shim gives it.
  case writeFailed(path: String, errno: Int32?)

  public var description: String {
    switch self {
    case .alreadyRecording: return "a recording is already running in this process"
    case .invalidDepth(let depth): return "the stack depth must be from 1 to 256, not \(depth)"
    case .io(let what, let err): return "\(what): \(String(cString: strerror(err)))"
    case .writeFailed(let path, let err):
      let reason =
        err.map { ": \(String(cString: strerror($0)))" } ?? " (the shim said why on stderr)"
      return "writing the trace to '\(path)' failed, so the recording stopped early\(reason)"
    case .notRecording:
      return "no recording is running: check for leaks inside Heapline.record { }, or in a"
        + " program that `heapline record` runs"
    }
  }
}
