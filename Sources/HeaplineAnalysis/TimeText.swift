/// Text forms of nanosecond times for the text report.
package enum TimeText {
  /// `850 ns`, `12.345 µs`, `1.250 ms`, `2.500 s`: three decimals in the largest unit that
  /// fits, truncated (the JSON report carries the exact nanoseconds).
  package static func duration(_ nanoseconds: UInt64) -> String {
    let units: [(UInt64, String)] = [(1_000_000_000, "s"), (1_000_000, "ms"), (1_000, "µs")]
    for (scale, name) in units where nanoseconds >= scale {
      let thousandths = (nanoseconds % scale) / (scale / 1000)
      let padded = String(repeating: "0", count: 3 - String(thousandths).count) + "\(thousandths)"
      return "\(nanoseconds / scale).\(padded) \(name)"
    }
    return "\(nanoseconds) ns"
  }
}
