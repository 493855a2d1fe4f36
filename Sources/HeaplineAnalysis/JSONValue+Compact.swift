extension JSONValue {
  /// On one line, without spaces: for large documents such as speedscope's sample lists,
  /// which the pretty form would spread over one line per number.
  func compactRendered() -> String {
    var text = TextBytes()
    var output = StringOutput()
    // A StringOutput never throws.
    try? appendCompact(to: &text, flushingTo: &output)
    try? text.flush(to: &output, ifOver: 0)
    return output.text
  }

  /// Writes what ``compactRendered()`` returns, piece by piece, making the elements of lazy
  /// arrays only as they are written: a speedscope file is never whole in memory.
  func writeCompact(to output: inout some TextOutput) throws(AnalysisError) {
    var text = TextBytes()
    try appendCompact(to: &text, flushingTo: &output)
    try text.flush(to: &output, ifOver: 0)
  }

  private func appendCompact(to text: inout TextBytes, flushingTo output: inout some TextOutput)
    throws(AnalysisError)
  {
    switch self {
    case .object(let members):
      text.append("{")
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { text.append(",") }
        JSONValue.appendQuoted(key, to: &text)
        text.append(":")
        try value.appendCompact(to: &text, flushingTo: &output)
      }
      text.append("}")
    case .array(let elements):
      try Self.appendCompactElements(elements.count, to: &text, &output) { elements[$0] }
    case .lazyArray(let count, let element):
      try Self.appendCompactElements(count, to: &text, &output, element)
    case .fragment(let fragment):
      try fragment.value.appendCompact(to: &text, flushingTo: &output)
    case .integers(let values):
      text.append(byte: 0x5B)
      for (index, value) in values.enumerated() {
        if index > 0 { text.append(byte: 0x2C) }
        text.append(decimal: value)
      }
      text.append(byte: 0x5D)
    default:
      appendScalar(to: &text)
    }
    try text.flush(to: &output)
  }

  private static func appendCompactElements(
    _ count: Int, to text: inout TextBytes, _ output: inout some TextOutput,
    _ element: (Int) -> JSONValue
  ) throws(AnalysisError) {
    text.append("[")
    for index in 0..<count {
      if index > 0 { text.append(",") }
      try element(index).appendCompact(to: &text, flushingTo: &output)
    }
    text.append("]")
  }
}
