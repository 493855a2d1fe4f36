import Foundation
import Testing

@testable import HeaplineAnalysis

/// Strings in Heapline's JSON: copied whole when nothing in them needs escaping, escaped as
/// JSON asks otherwise, and read back the same by a JSON parser either way.
@Suite struct JSONQuotingTests {
  @Test(arguments: [
    "specialized Array.append(_:)", "/usr/lib/libc.so.6", "", "naïve ✓ 函数",
    "say \"hi\"", "C:\\path", "line\nbreak\r\ttab", "\u{01}\u{1F}bell\u{07}",
    "mixed \"q\" and ünïcode\n",
  ])
  func aStringReadsBackAsItWas(string: String) throws {
    let text = JSONValue.array([.string(string)]).compactRendered()
    let parsed = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String]
    #expect(parsed == [string])
  }

  @Test func onlyQuotesBackslashesAndControlCharactersAreEscaped() {
    #expect(JSONValue.string("a/b ✓").compactRendered() == "\"a/b ✓\"")
    #expect(JSONValue.string("\"\\\n\u{01}").compactRendered() == "\"\\\"\\\\\\n\\u0001\"")
  }
}
