import Foundation
import HeaplineAnalysis
import HeaplineTrace

/// The referees of RefereeTests: Valgrind's memcheck for leak verdicts, heaptrack for
/// allocation counts, each run on the same program as Heapline.
enum Referees {
  /// Every child gets a deadline: `timeout` kills it (and `--kill-after`, if it ignores
  /// SIGTERM) when the referee hangs.
  static func run(_ executable: String, _ arguments: [String], seconds: Int = 120) throws
    -> Harness.Result
  {
    try Harness.run(
      "/usr/bin/timeout", ["--kill-after=5", String(seconds), executable] + arguments)
  }

  /// memcheck's LEAK SUMMARY.
  struct Memcheck {
    var definitelyLost = LeakAmount()
    var indirectlyLost = LeakAmount()
    var possiblyLost = LeakAmount()
  }

  /// Runs `program` under `valgrind --leak-check=full` and reads its summary lines, such as
  /// `==1== definitely lost: 464 bytes in 8 blocks`.
  static func memcheck(_ program: String, _ arguments: [String] = []) throws -> Memcheck {
    let result = try run("/usr/bin/valgrind", ["--leak-check=full", program] + arguments)
    guard
      result.stderr.contains("LEAK SUMMARY") || result.stderr.contains("All heap blocks were freed")
    else { throw HarnessError("memcheck gave no leak summary: \(result.stderr)") }
    func amount(_ kind: String) throws -> LeakAmount {
      guard
        let line = result.stderr.split(separator: "\n").first(where: { $0.contains("\(kind):") })
      else { return LeakAmount() }  // "All heap blocks were freed": no summary lines
      let numbers = line.split(separator: ":", maxSplits: 1)[1].split(separator: " ").compactMap {
        UInt64($0.replacingOccurrences(of: ",", with: ""))
      }
      guard numbers.count == 2 else { throw HarnessError("memcheck's line: \(line)") }
      return LeakAmount(blocks: numbers[1], bytes: numbers[0])
    }
    return Memcheck(
      definitelyLost: try amount("definitely lost"), indirectlyLost: try amount("indirectly lost"),
      possiblyLost: try amount("possibly lost"))
  }

  /// heaptrack's totals: its calls to allocation functions, and its peak heap bytes.
  struct Heaptrack {
    var allocations: UInt64
    var peakBytes: UInt64
  }

  /// Runs `program` under `heaptrack` and sums the stacks of two `heaptrack_print` flame graph
  /// files: their allocation counts and their bytes at the peak are exact, where its summary
  /// rounds bytes (`82.52K`).
  static func heaptrack(_ program: String, _ arguments: [String] = [], in directory: URL) throws
    -> Heaptrack
  {
    let base = directory.appendingPathComponent("heaptrack").path
    let record = try run("/usr/bin/heaptrack", ["-o", base, program] + arguments)
    guard record.status == 0 else { throw HarnessError("heaptrack failed: \(record.stderr)") }
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    guard let data = files.first(where: { $0.hasPrefix("heaptrack.") && !$0.hasSuffix(".txt") })
    else { throw HarnessError("heaptrack wrote no data file in \(directory.path)") }
    func sum(_ cost: String) throws -> UInt64 {
      let out = directory.appendingPathComponent("\(cost).txt").path
      let print = try run(
        "/usr/bin/heaptrack_print",
        [
          "-f", directory.appendingPathComponent(data).path, "-p", "0", "-a", "0", "-T", "0",
          "-F", out, "--flamegraph-cost-type", cost,
        ])
      guard print.status == 0 else { throw HarnessError("heaptrack_print: \(print.stderr)") }
      return try String(contentsOfFile: out, encoding: .utf8).split(separator: "\n").reduce(0) {
        $0 + (UInt64($1.split(separator: " ").last ?? "") ?? 0)
      }
    }
    return Heaptrack(allocations: try sum("allocations"), peakBytes: try sum("peak"))
  }

  /// What Heapline says of the same program: its leak report (default suppressions on), its
  /// statistics, and the exit status of `heapline leaks`.
  struct Heapline {
    var report: LeakReport
    var statistics: Statistics
    var leaksStatus: Int32
  }

  static func heapline(_ program: String, _ arguments: [String] = [], in directory: URL) throws
    -> Heapline
  {
    let trace = directory.appendingPathComponent("heapline.trace").path
    let record = try run(Harness.heapline, ["record", "-o", trace, "--", program] + arguments)
    guard record.status == 0 else { throw HarnessError("record failed: \(record.stderr)") }
    let leaks = try run(Harness.heapline, ["leaks", trace])
    return Heapline(
      report: try LeakReport.read(path: trace, symbolizer: Symbolizer()),
      statistics: try Statistics(reader: TraceReader(path: trace)), leaksStatus: leaks.status)
  }
}
