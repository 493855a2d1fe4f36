import HeaplineTrace
import Synchronization

#if canImport(Glibc)
  import Glibc
#endif

/// A line on stderr that says how far an analysis has read its trace, shown only on a
/// terminal and only once the analysis has run for a while (one second, or
/// `HEAPLINE_PROGRESS_AFTER` seconds), so that short runs and redirected output see nothing.
///
/// A thread of its own redraws the line five times a second from `TraceReadProgress`, which
/// passes over a trace update once a chunk, so the analyses' loops pay nothing for it.
/// ``stop()`` erases the line before the result is printed.
///
/// ```swift
/// ProgressLine.start(label: "report")
/// let statistics = try Statistics(reader: reader)
/// ProgressLine.stop()
/// print(text)
/// ```
enum ProgressLine {
  private struct State {
    var label = ""
    var running = false
    var shown = false
    var started: Double = 0
    var delay: Double = 1
  }

  private static let state = Mutex(State())

  /// Starts the line's thread when stderr is a terminal; does nothing otherwise.
  static func start(label: String) {
    guard isatty(2) == 1 else { return }
    let delay = configuredDelay()
    let begin = state.withLock { state -> Bool in
      guard !state.running else { return false }
      state = State(label: label, running: true, shown: false, started: now(), delay: delay)
      return true
    }
    guard begin else { return }
    // The first line is drawn at once when there is no delay, so a caller that finishes
    // quickly still shows it.
    if delay == 0 { redraw() }
    var thread = pthread_t()
    let created = pthread_create(
      &thread, nil,
      { _ in
        while ProgressLine.redraw() { _ = usleep(200_000) }
        return nil
      }, nil)
    if created == 0 { pthread_detach(thread) }
  }

  /// Erases the line, if one is shown, and stops redrawing it. Safe to call at any time.
  static func stop() {
    state.withLock { state in
      if state.shown { write("\r\u{1B}[K") }
      state.running = false
      state.shown = false
    }
  }

  /// Draws the line if it is due; returns whether the thread should keep going.
  @discardableResult
  private static func redraw() -> Bool {
    state.withLock { state in
      guard state.running else { return false }
      let elapsed = now() - state.started
      guard elapsed >= state.delay else { return true }
      let passes = Self.describe(TraceReadProgress.current)
      write("\rheapline \(state.label): \(passes), \(Int(elapsed)) s\u{1B}[K")
      state.shown = true
      return true
    }
  }

  /// Where the passes are: the share of their chunks read, which only grows within a pass; a
  /// pass after the first says so, and between passes and after the last the analysis works
  /// (symbols, output), which no count of chunks measures. Not "finishing": another pass may
  /// follow (`leaks` said "finishing", then read the trace a second time for five seconds).
  static func describe(_ passes: TraceReadProgress.Snapshot) -> String {
    guard passes.running > 0 else {
      if passes.begun == 0 { return "opening the trace" }
      return passes.begun == 1 ? "trace read, working" : "\(passes.begun) passes read, working"
    }
    let percent = passes.total == 0 ? 0 : passes.done * 100 / passes.total
    let pass = passes.pass
    return (pass > 1 ? "pass \(pass) over the trace" : "reading the trace") + ", \(percent) %"
  }

  private static func configuredDelay() -> Double {
    guard let text = getenv("HEAPLINE_PROGRESS_AFTER").map({ String(cString: $0) }) else {
      return 1
    }
    guard let value = Double(text), value >= 0, value < 1e6 else {
      CLIOutput.warning("HEAPLINE_PROGRESS_AFTER='\(text)' is not a number of seconds; using 1")
      return 1
    }
    return value
  }

  private static func now() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_MONOTONIC, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  private static func write(_ text: String) {
    text.withCString { _ = Glibc.write(2, $0, strlen($0)) }
  }
}
