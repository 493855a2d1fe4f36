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
  /// An array of integers, written without a value made per element: a speedscope sample is
  /// a stack's frame indexes, millions of them in all.
  case integers([Int])
  /// A value that many places of a document share, formatted once (``JSONFragment``).
  case fragment(JSONFragment)

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
    var text = TextBytes()
    var output = StringOutput()
    // A StringOutput never throws.
    try? append(to: &text, indent: indent, flushingTo: &output)
    try? text.flush(to: &output, ifOver: 0)
    return output.text
  }

  /// Writes what ``rendered(indent:)`` returns, piece by piece: containers are never
  /// formatted whole, and lazy arrays make each element only as it is written.
  func write(to output: inout some TextOutput, indent: Int = 0) throws(AnalysisError) {
    var text = TextBytes()
    try append(to: &text, indent: indent, flushingTo: &output)
    try text.flush(to: &output, ifOver: 0)
  }

  /// The pretty form appended to `text`, which is handed to `output` whenever it has grown
  /// past a piece, so that neither a document nor one of its strings is made whole.
  private func append(
    to text: inout TextBytes, indent: Int, flushingTo output: inout some TextOutput
  ) throws(AnalysisError) {
    switch self {
    case .object(let members) where !members.isEmpty:
      for (index, (key, value)) in members.enumerated() {
        text.append(index == 0 ? "{\n" : ",\n")
        text.append(spaces: indent + 2)
        Self.appendQuoted(key, to: &text)
        text.append(": ")
        try value.append(to: &text, indent: indent + 2, flushingTo: &output)
      }
      Self.close("}", to: &text, indent: indent)
    case .array(let elements) where !elements.isEmpty:
      try Self.appendElements(elements.count, to: &text, indent: indent, &output) {
        elements[$0]
      }
    case .lazyArray(let count, let element) where count > 0:
      try Self.appendElements(count, to: &text, indent: indent, &output, element)
    case .integers(let values) where !values.isEmpty:
      try Self.appendElements(values.count, to: &text, indent: indent, &output) {
        .signed(values[$0])
      }
    case .fragment(let fragment): text.append(bytes: fragment.pretty(indent: indent))
    default: appendScalar(to: &text)
    }
    try text.flush(to: &output)
  }

  /// A value other than a non-empty container, as both the pretty and the compact form print
  /// it.
  func appendScalar(to text: inout TextBytes) {
    switch self {
    case .object: text.append("{}")
    case .array, .lazyArray, .integers: text.append("[]")
    case .fragment(let fragment): fragment.value.appendScalar(to: &text)
    case .string(let string): Self.appendQuoted(string, to: &text)
    case .unsigned(let number): text.append(decimal: number)
    case .signed(let number): text.append(decimal: number)
    case .bool(let flag): text.append(flag ? "true" : "false")
    case .null: text.append("null")
    }
  }

  private static func close(_ bracket: String, to text: inout TextBytes, indent: Int) {
    text.append(byte: 0x0A)
    text.append(spaces: indent)
    text.append(bracket)
  }

  private static func appendElements(
    _ count: Int, to text: inout TextBytes, indent: Int, _ output: inout some TextOutput,
    _ element: (Int) -> JSONValue
  ) throws(AnalysisError) {
    for index in 0..<count {
      text.append(index == 0 ? "[\n" : ",\n")
      text.append(spaces: indent + 2)
      try element(index).append(to: &text, indent: indent + 2, flushingTo: &output)
    }
    close("]", to: &text, indent: indent)
  }

  /// `text` as a JSON string. Only quotes, backslashes and control characters are escaped, so
  /// a string with none of them is copied as it is.
  static func appendQuoted(_ string: String, to text: inout TextBytes) {
    text.append(byte: 0x22)
    // Names and paths seldom need escaping: checked first, they are copied whole.
    let plain = string.utf8.withContiguousStorageIfAvailable { bytes in
      !bytes.contains { $0 < 0x20 || $0 == 0x22 || $0 == 0x5C }
    }
    if plain == true {
      text.append(string)
      text.append(byte: 0x22)
      return
    }
    for byte in string.utf8 {
      switch byte {
      case 0x22: text.append("\\\"")
      case 0x5C: text.append("\\\\")
      case 0x0A: text.append("\\n")
      case 0x0D: text.append("\\r")
      case 0x09: text.append("\\t")
      case ..<0x20:
        text.append("\\u00")
        text.append(byte: byte < 0x10 ? 0x30 : 0x31)
        let low = byte & 0x0F
        text.append(byte: low < 10 ? 0x30 + low : 0x57 + low)
      default: text.append(byte: byte)
      }
    }
    text.append(byte: 0x22)
  }
}

/// A value that thousands of places in a document hold (a frame in every stack that passes
/// through it), pretty-printed once for the indentation it is asked at and then copied as bytes:
/// formatting each copy again was most of the time of a JSON report of every stack.
final class JSONFragment {
  let value: JSONValue
  private var rendered: (indent: Int, bytes: [UInt8])?

  init(_ value: JSONValue) { self.value = value }

  /// What ``JSONValue/rendered(indent:)`` gives for the value, as bytes.
  func pretty(indent: Int) -> [UInt8] {
    if let rendered, rendered.indent == indent { return rendered.bytes }
    let bytes = Array(value.rendered(indent: indent).utf8)
    rendered = (indent, bytes)
    return bytes
  }
}
