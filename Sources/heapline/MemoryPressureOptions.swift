import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

/// The options of `heapline record` that raise memory warnings in the recorded program, and
/// the memory budget that ends it as a low-memory kill would.
struct MemoryPressureOptions: ParsableArguments {
  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "Raise memory warnings at these times, in seconds into the run; LEVEL is warning "
        + "(the default), urgent or critical. Example: --warn-at 1.5,3:critical.",
      valueName: "seconds[:level],..."))
  var warnAt: String?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "The signal that raises a memory warning when sent to the program (none by default; "
        + "SIGUSR1 is 10); "
        + "sigqueue(2) may carry the level, 1 to 3.",
      valueName: "signal-number"))
  var warnSignal: Int32 = 0

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "A memory budget for the program's footprint (RSS): warning, urgent and critical at 80, "
        + "90 and 95 %; at 100 % it is killed with SIGKILL and a low-memory report is written. "
        + "A number of bytes, or with K, M or G (binary units).",
      valueName: "bytes"))
  var memoryLimit: String?

  @Flag(help: "Raise a warning when the kernel reports memory pressure (Linux PSI).")
  var psi = false

  @Option(
    help: ArgumentHelp(
      "The PSI trigger, as /proc/pressure/memory takes it (implies --psi).",
      valueName: "trigger"))
  var psiTrigger: String?

  /// `--warn-at`, parsed: (milliseconds, level) in time order.
  func warnTimes() throws -> [(milliseconds: UInt64, level: Int)] {
    guard let warnAt else { return [] }
    let levels = ["warning": 1, "urgent": 2, "critical": 3]
    let times = try warnAt.split(separator: ",").map { item in
      let parts = item.split(separator: ":", maxSplits: 1).map(String.init)
      guard let seconds = Double(parts[0]), seconds >= 0, seconds < 1e6 else {
        throw ValidationError("--warn-at takes seconds from 0, not '\(item)'")
      }
      let level = parts.count > 1 ? levels[parts[1]] : 1
      guard let level else {
        throw ValidationError("--warn-at levels are warning, urgent or critical, not '\(parts[1])'")
      }
      return (UInt64((seconds * 1000).rounded()), level)
    }
    guard !times.isEmpty else { throw ValidationError("--warn-at needs at least one time") }
    return times.sorted { $0.0 < $1.0 }
  }

  /// `--memory-limit`, in bytes.
  func limitBytes() throws -> UInt64? {
    guard let memoryLimit else { return nil }
    let units: [Character: Double] = ["K": 1024, "M": 1024 * 1024, "G": 1024 * 1024 * 1024]
    var text = memoryLimit.uppercased()
    if text.hasSuffix("IB") { text.removeLast(2) } else if text.hasSuffix("B") { text.removeLast() }
    var scale = 1.0
    if let unit = text.last, let factor = units[unit] {
      scale = factor
      text.removeLast()
    }
    guard let value = Double(text), value > 0, value * scale < 1.8e19 else {
      throw ValidationError(
        "--memory-limit takes a number of bytes, with K, M or G, not '\(memoryLimit)'")
    }
    return UInt64(value * scale)
  }

  func validate() throws {
    _ = try warnTimes()
    _ = try limitBytes()
    try SignalOption.check(warnSignal, option: "--warn-signal")
  }

  /// The shim's environment for these options.
  func environment() throws -> [String: String] {
    var environment = ["HEAPLINE_WARN_SIGNAL": String(warnSignal)]
    let times = try warnTimes()
    if !times.isEmpty {
      environment["HEAPLINE_WARN_AT_MS"] = times.map { "\($0.milliseconds):\($0.level)" }
        .joined(separator: ",")
    }
    if let limit = try limitBytes() { environment["HEAPLINE_MEMORY_LIMIT"] = String(limit) }
    if psi || psiTrigger != nil {
      environment["HEAPLINE_PSI"] = psiTrigger ?? "some 150000 1000000"
    }
    return environment
  }

  /// After the program ended with SIGKILL: when the shim killed it for its budget, writes the
  /// low-memory report beside the trace and says so. Returns the report's path.
  @discardableResult
  static func reportKill(program: String, trace: String) -> String? {
    guard let reader = try? TraceReader(path: trace),
      reader.trailer?.endReason == .memoryLimit,
      let statistics = try? Statistics(reader: reader, options: StatisticsOptions(topStackCount: 5))
    else { return nil }
    let report = StatisticsReport(statistics: statistics, symbolizer: Symbolizer())
    let path = trace + ".lowmem.txt"
    let text = LowMemoryReportRenderer(program: program).render(report)
    do {
      var output = try FileOutput(path: path)
      try output.write(text)
      try output.close()
    } catch {
      CLIOutput.warning("cannot write the low-memory report: \(error)")
      return nil
    }
    let limit = statistics.memoryLimitKill.map { ByteCountText.grouped($0.limit.limitBytes) }
    CLIOutput.note(
      "'\(program)' exceeded its memory limit of \(limit ?? "?") bytes and was killed "
        + "(SIGKILL); low-memory report written to \(path)")
    return path
  }
}
