extension JSONValue {
  /// On one line, without spaces: for large documents such as speedscope's sample lists,
  /// which the pretty form would spread over one line per number.
  func compactRendered() -> String {
    var text = ""
    appendCompact(to: &text)
    return text
  }

  private func appendCompact(to text: inout String) {
    switch self {
    case .object(let members):
      text += "{"
      for (index, (key, value)) in members.enumerated() {
        if index > 0 { text += "," }
        text += JSONValue.string(key).rendered() + ":"
        value.appendCompact(to: &text)
      }
      text += "}"
    case .array(let elements):
      text += "["
      for (index, element) in elements.enumerated() {
        if index > 0 { text += "," }
        element.appendCompact(to: &text)
      }
      text += "]"
    default:
      text += rendered()
    }
  }
}
