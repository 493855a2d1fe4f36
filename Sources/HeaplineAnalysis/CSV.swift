/// RFC 4180 text: fields quoted only when they must be, records ended by CRLF.
enum CSV {
  /// The record separator RFC 4180 prescribes.
  static let lineEnd = "\r\n"

  /// `field` as it must appear in a record: in double quotes, with quotes doubled, when it
  /// holds a comma, a quote, CR or LF (Swift type names hold commas: `Dictionary<K, V>`).
  static func field(_ field: String) -> String {
    let needsQuotes = field.utf8.contains { $0 == 0x2C || $0 == 0x22 || $0 == 0x0A || $0 == 0x0D }
    guard needsQuotes else { return field }
    var quoted = "\""
    for character in field {
      if character == "\"" { quoted += "\"\"" } else { quoted.append(character) }
    }
    return quoted + "\""
  }

  /// One record: the fields escaped, joined by commas, and the line end.
  static func record(_ fields: [String]) -> String {
    fields.map(field).joined(separator: ",") + lineEnd
  }

  /// Nanoseconds as exact decimal seconds: `12.000345678`.
  static func seconds(_ nanoseconds: UInt64) -> String {
    let fraction = String(nanoseconds % 1_000_000_000)
    return "\(nanoseconds / 1_000_000_000)."
      + String(repeating: "0", count: 9 - fraction.count) + fraction
  }

  /// An address in hexadecimal: `0x7f3a00001000`.
  static func address(_ value: UInt64) -> String {
    "0x" + String(value, radix: 16)
  }
}
