import Foundation
import HeaplineTrace

/// The phases fixture (Fixtures/phases.c) recorded once for all the tests that read it, and
/// the tools to read what the CLI writes about it.
enum PhasesFixture {
  struct Recording: Sendable {
    var directory: URL
    var trace: String
  }

  /// `phases phases`, recorded once per test run.
  static let phases = Result { try record(["phases"], name: "phases") }

  /// Records the fixture with `arguments`, and `options` for `heapline record`.
  static func record(_ arguments: [String], options: [String] = [], name: String) throws
    -> Recording
  {
    let directory = try Harness.temporaryDirectory()
    let program = try Harness.fixture("phases", in: directory)
    let trace = directory.appendingPathComponent("\(name).trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace] + options + ["--", program] + arguments)
    guard result.status == 0 else {
      throw HarnessError("recording \(arguments) failed (\(result.status)): \(result.stderr)")
    }
    return Recording(directory: directory, trace: trace)
  }

  /// The generation marks of a trace, in time order, with their times.
  static func marks(_ trace: String) throws -> [(name: String, time: UInt64)] {
    var stream = try TraceReader(path: trace).events()
    var marks: [(String, UInt64)] = []
    while let event = try stream.next() {
      if case .mark(let mark) = event, mark.kind == .generation {
        marks.append((mark.name, mark.time))
      }
    }
    return marks
  }

  /// The totals of `heapline report --format json`, with more arguments if given.
  static func reportTotals(_ trace: String, _ arguments: [String] = []) throws -> [String: Int] {
    let result = try Harness.heapline(["report", trace, "--format", "json"] + arguments)
    guard result.status == 0,
      let json = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any],
      let totals = json["totals"] as? [String: Any]
    else { throw HarnessError("report failed: \(result.stderr)") }
    return totals.compactMapValues { $0 as? Int }
  }
}

/// A CSV that the CLI wrote, read back: RFC 4180 records ended by CRLF, no quoted fields.
struct CSVTable {
  var header: [String]
  var rows: [[String]]

  init(_ text: String) throws {
    guard text.hasSuffix("\r\n"), !text.contains("\"") else {
      throw HarnessError("not the CSV expected: \(text.prefix(200))")
    }
    // "\r\n" is one Character in Swift: dropping the last one drops the whole line end.
    let records = text.dropLast().components(separatedBy: "\r\n").map {
      $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
    }
    header = records[0]
    rows = Array(records.dropFirst())
    guard rows.allSatisfy({ $0.count == header.count }) else {
      throw HarnessError("rows of different lengths")
    }
  }

  /// The column named `name`.
  func column(_ name: String) throws -> Int {
    guard let index = header.firstIndex(of: name) else { throw HarnessError("no column \(name)") }
    return index
  }

  /// Column `name` of every row, as integers.
  func integers(_ name: String) throws -> [Int] {
    let index = try column(name)
    return try rows.map { row in
      guard let value = Int(row[index]) else { throw HarnessError("\(name): '\(row[index])'") }
      return value
    }
  }
}
