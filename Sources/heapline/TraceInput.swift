import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

/// What the analysis subcommands share: opening a trace with the usual warning, and turning
/// the seconds and milliseconds users type into nanoseconds.
enum TraceInput {
  /// Opens `path`, warning on stderr when the trace was cut short.
  static func open(_ path: String) throws -> TraceReader {
    let reader = try TraceReader(path: path)
    if let warning = reader.incompletenessWarning { CLIOutput.warning(warning) }
    return reader
  }

  /// Whole nanoseconds in `seconds`, which `validate()` has checked to be from 0 to 1e9.
  static func nanoseconds(seconds: Double) -> UInt64 {
    UInt64((seconds * 1e9).rounded())
  }

  /// Throws unless `value` is a number of seconds from 0 (NaN and infinities fail).
  static func checkSeconds(_ value: Double?, option: String) throws {
    guard let value else { return }
    guard value >= 0 && value < 1e9 else {
      throw ValidationError("\(option) must be a number of seconds from 0, not \(value)")
    }
  }
}
