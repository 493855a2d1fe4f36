import Synchronization

/// A string that an event carries, kept once per process in a table and named by its place:
/// a mark's name, an observer's. It makes every ``TraceEvent`` plain data, so a pass moves and
/// copies events, millions of them, without retaining or releasing anything; a `String` in any
/// of its cases made each copy a call.
///
/// Equal strings have equal places, so comparing and hashing places is comparing strings.
/// The table keeps each distinct string for the life of the process: events carry few of them
/// (a trace's mark names and observers).
struct InternedText: Hashable, Sendable {
  private let place: UInt32

  init(_ string: String) { place = Self.table.withLock { $0.place(of: string) } }

  var string: String { Self.table.withLock { $0.strings[Int(place)] } }

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
