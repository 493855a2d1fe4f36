/// Text forms of byte counts, shared by size-class names and reports.
///
/// Integer arithmetic only, so the same count always prints the same text.
public enum ByteCountText {
  private static let units = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"]

  /// `48 Bytes` below 1 KiB; above, two decimals in the largest binary unit that fits:
  /// `1.25 KiB`, `2.00 MiB`.
  public static func binary(_ bytes: UInt64) -> String {
    guard bytes >= 1024 else { return "\(bytes) Bytes" }
    var unitIndex = 0
    var unit: UInt64 = 1024
    while unitIndex + 1 < units.count, bytes / 1024 >= unit {
      unit *= 1024
      unitIndex += 1
    }
    // Hundredths of the unit, rounded half up, computed in 128 bits so no count overflows.
    let scaled = bytes.multipliedFullWidth(by: 100)
    let (quotient, remainder) = unit.dividingFullWidth(scaled)
    let hundredths = quotient + (remainder >= unit - remainder ? 1 : 0)
    let fraction = hundredths % 100
    return "\(hundredths / 100).\(fraction < 10 ? "0" : "")\(fraction) \(units[unitIndex])"
  }

  /// The exact count with thousands separators: `4,800`.
  public static func grouped(_ value: UInt64) -> String {
    let digits = String(value)
    var result = ""
    result.reserveCapacity(digits.count + digits.count / 3)
    for (offset, digit) in digits.enumerated() {
      if offset > 0 && (digits.count - offset) % 3 == 0 { result.append(",") }
      result.append(digit)
    }
    return result
  }
}
