/// A JSON document built in code and printed with its keys in the order given.
///
/// The report writes JSON by hand rather than through `JSONEncoder` so that keys keep the
/// documented order, absent values print as `null` instead of vanishing, and 64-bit counts
/// print exactly.
enum JSONValue {
  case object([(String, JSONValue)])
  case array([JSONValue])
  case string(String)
  case unsigned(UInt64)
  case signed(Int)
  case bool(Bool)
  case null
  /// An array whose elements are made one at a time as they are written, so that a long list
  /// (a report's top stacks with `--top 1000000`) never exists whole in memory.
  case lazyArray(count: Int, element: (Int) -> JSONValue)

  /// A string, or `null` for `nil`.
  static func string(_ value: String?) -> JSONValue { value.map { .string($0) } ?? .null }
  /// An unsigned integer, or `null` for `nil`.
  static func unsigned(_ value: UInt64?) -> JSONValue { value.map { .unsigned($0) } ?? .null }
  /// A signed integer, or `null` for `nil`.
  static func signed(_ value: Int?) -> JSONValue { value.map { .signed($0) } ?? .null }
  /// An address as a hexadecimal string, since JSON numbers lose precision past 2^53.
  static func address(_ value: UInt64?) -> JSONValue {
    value.map { .string("0x" + String($0, radix: 16)) } ?? .null
  }

  /// Pretty-printed with two-space indentation.
  func rendered(indent: Int = 0) -> String {
    let inner = String(repeating: " ", count: indent + 2)
    let outer = String(repeating: " ", count: indent)
    switch self {
    case .object(let members):
      guard !members.isEmpty else { return "{}" }
      let body = members.map { key, value in
        inner + Self.quoted(key) + ": " + value.rendered(indent: indent + 2)
      }
      return "{\n" + body.joined(separator: ",\n") + "\n" + outer + "}"
    case .lazyArray(let count, let element):
      return JSONValue.array((0..<count).map(element)).rendered(indent: indent)
    case .array(let elements):
      guard !elements.isEmpty else { return "[]" }
      let body = elements.map { inner + $0.rendered(indent: indent + 2) }
      return "[\n" + body.joined(separator: ",\n") + "\n" + outer + "]"
    case .string(let text): return Self.quoted(text)
    case .unsigned(let number): return String(number)
    case .signed(let number): return String(number)
    case .bool(let flag): return flag ? "true" : "false"
    case .null: return "null"
    }
  }

  /// Writes what ``rendered(indent:)`` returns, piece by piece: containers are never
  /// formatted whole, and lazy arrays make each element only as it is written.
  func write(to output: inout some TextOutput, indent: Int = 0) throws(AnalysisError) {
    let inner = String(repeating: " ", count: indent + 2)
    let outer = String(repeating: " ", count: indent)
    switch self {
    case .object(let members) where !members.isEmpty:
      for (index, (key, value)) in members.enumerated() {
        try output.write((index == 0 ? "{\n" : ",\n") + inner + Self.quoted(key) + ": ")
        try value.write(to: &output, indent: indent + 2)
      }
      try output.write("\n" + outer + "}")
    case .array(let elements) where !elements.isEmpty:
      try Self.writeElements(elements.count, to: &output, indent: indent) { elements[$0] }
    case .lazyArray(let count, let element) where count > 0:
      try Self.writeElements(count, to: &output, indent: indent, element)
    default:
      try output.write(rendered(indent: indent))
    }
  }

  private static func writeElements(
    _ count: Int, to output: inout some TextOutput, indent: Int, _ element: (Int) -> JSONValue
  ) throws(AnalysisError) {
    let inner = String(repeating: " ", count: indent + 2)
    for index in 0..<count {
      try output.write((index == 0 ? "[\n" : ",\n") + inner)
      try element(index).write(to: &output, indent: indent + 2)
    }
    try output.write("\n" + String(repeating: " ", count: indent) + "]")
  }

  private static func quoted(_ text: String) -> String {
    var result = "\""
    for scalar in text.unicodeScalars {
      switch scalar {
      case "\"": result += "\\\""
      case "\\": result += "\\\\"
      case "\n": result += "\\n"
      case "\r": result += "\\r"
      case "\t": result += "\\t"
      case _ where scalar.value < 0x20:
        let hex = String(scalar.value, radix: 16)
        result += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
      default: result.unicodeScalars.append(scalar)
      }
    }
    return result + "\""
  }
}
