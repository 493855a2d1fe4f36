import ArgumentParser

#if canImport(Glibc)
  import Glibc
#endif

/// `heapline record`'s options for leak scans, passed to the shim in its environment.
struct LeakScanOptions: ParsableArguments {
  @Flag(
    inversion: .prefixedNo,
    help: "Scan for leaks when the program exits (read them with `heapline leaks`).")
  var leaks: Bool?

  /// Whether a leak scan option was given, `--leaks` included: sampling refuses them.
  var isAsked: Bool { leaks == true || leaksEvery != nil || leaksSignal != 0 || graph }

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp("Also scan for leaks every SECONDS.", valueName: "seconds"))
  var leaksEvery: Double?

  @Option(
    parsing: .unconditional,
    help: ArgumentHelp(
      "The signal that makes the program scan for leaks when sent to it (none by default; "
        + "SIGPWR is 30).",
      valueName: "signal-number"))
  var leaksSignal: Int32 = 0

  @Flag(
    help: ArgumentHelp(
      "Keep each leak scan's reachability graph, for `heapline retainers` (what keeps an"
        + " object alive)."))
  var graph = false

  func validate() throws {
    if let every = leaksEvery, !(every >= 0.01 && every < 1e6) {
      throw ValidationError("--leaks-every must be a number of seconds from 0.01, not \(every)")
    }
    try SignalOption.check(leaksSignal, option: "--leaks-signal")
  }

  /// HEAPLINE_LEAKS_AT_EXIT, HEAPLINE_LEAKS_EVERY_MS, HEAPLINE_LEAKS_SIGNAL and
  /// HEAPLINE_LEAKS_GRAPH. With `sampling`, every scan is off.
  func environment(sampling: Bool = false) -> [String: String] {
    if sampling { return ["HEAPLINE_LEAKS_AT_EXIT": "0", "HEAPLINE_LEAKS_SIGNAL": "0"] }
    var environment = [
      "HEAPLINE_LEAKS_AT_EXIT": leaks ?? true ? "1" : "0",
      "HEAPLINE_LEAKS_SIGNAL": String(leaksSignal), "HEAPLINE_LEAKS_GRAPH": graph ? "1" : "0",
    ]
    if let every = leaksEvery {
      environment["HEAPLINE_LEAKS_EVERY_MS"] = String(max(1, Int((every * 1000).rounded())))
    }
    return environment
  }
}
