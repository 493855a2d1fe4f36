import Synchronization

/// A string that an event carries (a mark's name, an observer's) as plain data, so that every
/// ``TraceEvent`` is plain data: a pass moves and copies events, millions of them, without
/// retaining or releasing anything, where a `String` in any of its cases made each copy a call.
///
/// A string of up to 23 bytes is held in place: the names that a trace can hold without end
/// (`every 1234`, `signal 56` from `--mark-every` and signals) take no memory beyond the event,
/// so a pass over a trace of any length stays in bounded memory. A longer one is kept once per
/// process in a table and named by its place there: those are names that code chose, few.
struct EventText: Hashable, Sendable {
  /// The length in the first byte, then the bytes, for a string held in place; all ones in
  /// the first byte and the table's place in the second word for a longer one.
  private var words: (UInt64, UInt64, UInt64) = (0, 0, 0)
  private static let inPlaceCapacity = 23
  private static let tabled: UInt8 = 0xFF

  init(_ string: String) {
    var string = string
    string.withUTF8 { bytes in
      if bytes.count <= Self.inPlaceCapacity {
        withUnsafeMutableBytes(of: &words) { raw in
          raw[0] = UInt8(bytes.count)
          raw.baseAddress!.advanced(by: 1).copyMemory(
            from: bytes.baseAddress!, byteCount: bytes.count)
        }
      } else {
        let place = Self.table.withLock { $0.place(of: String(decoding: bytes, as: UTF8.self)) }
        words = (UInt64(Self.tabled), UInt64(place), 0)
      }
    }
  }

  var string: String {
    withUnsafeBytes(of: words) { raw in
      if raw[0] == Self.tabled { return Self.table.withLock { $0.strings[Int(words.1)] } }
      return String(decoding: raw[1..<1 + Int(raw[0])], as: UTF8.self)
    }
  }

  /// Strings kept in the table so far.
  static var tabledCount: Int { table.withLock { $0.strings.count } }

  static func == (lhs: Self, rhs: Self) -> Bool { lhs.words == rhs.words }

  func hash(into hasher: inout Hasher) {
    hasher.combine(words.0)
    hasher.combine(words.1)
    hasher.combine(words.2)
  }

  private struct Table {
    var strings: [String] = []
    var places: [String: UInt32] = [:]

    mutating func place(of string: String) -> UInt32 {
      if let known = places[string] { return known }
      let place = UInt32(strings.count)
      strings.append(string)
      places[string] = place
      return place
    }
  }

  private static let table = Mutex(Table())
}
