import Foundation
import Testing

/// `go tool pprof`, run under a deadline on a profile the test wrote, and its `-traces` and
/// `-top` output read back. CI installs Debian's golang-go; where go is absent the tests that
/// need it are skipped, and say so.
enum GoPprof {
  /// One sample as `-traces` prints it.
  struct Trace: Equatable {
    var labels: [String: String]
    var value: Int
    /// Function names, leaf first.
    var frames: [String]
  }

  static let go: String? = ["/usr/bin/go", "/usr/local/go/bin/go"].first {
    FileManager.default.isExecutableFile(atPath: $0)
  }

  /// What a skipped test says when go is absent.
  static let skipReason: Comment =
    "go is not installed (CI installs golang-go): the go tool pprof checks are skipped"

  /// `go tool pprof` with `arguments`, its home in a fresh directory so that it keeps nothing.
  static func run(_ arguments: [String], profile: String) throws -> String {
    let home = try Harness.temporaryDirectory().path
    let result = try Harness.run(
      go!, ["tool", "pprof"] + arguments + [profile],
      environment: ["HOME": home, "PPROF_TMPDIR": home], timeout: 120)
    guard result.status == 0 else {
      throw HarnessError("go tool pprof \(arguments) failed (\(result.status)): \(result.stderr)")
    }
    return result.stdout
  }

  /// The samples of `type` (alloc_objects, alloc_space, inuse_objects, inuse_space), in bytes
  /// rather than scaled units.
  static func traces(_ profile: String, type: String) throws -> [Trace] {
    let text = try run(["-traces", "-unit=B", "-sample_index=\(type)"], profile: profile)
    let blocks = text.components(separatedBy: "\n").split { $0.hasPrefix("-----------+") }
    // The first block is the header (File:, Type:).
    let samples = blocks.dropFirst().filter { lines in lines.contains { !$0.isEmpty } }
    return try samples.map { lines in
      var trace = Trace(labels: [:], value: -1, frames: [])
      for line in lines {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        if trace.value < 0, let colon = trimmed.range(of: ":  "),
          !trimmed[..<colon.lowerBound].contains(" ")
        {
          trace.labels[String(trimmed[..<colon.lowerBound])] = String(
            trimmed[colon.upperBound...]
          ).trimmingCharacters(in: .whitespaces)
        } else if trace.value < 0 {
          let fields = trimmed.split(separator: " ", maxSplits: 1)
          guard let first = fields.first,
            let value = Int(first.replacingOccurrences(of: "B", with: ""))
          else { throw HarnessError("not a -traces value line: '\(line)' in\n\(text)") }
          trace.value = value
          if fields.count > 1 {
            trace.frames.append(fields[1].trimmingCharacters(in: .whitespaces))
          }
        } else if !trimmed.isEmpty {
          trace.frames.append(trimmed)
        }
      }
      return trace
    }
  }

  /// `-top -lines` of `type`: for each function at a file:line (`make_steps phases.c:38`), its
  /// flat value, every node shown.
  static func top(_ profile: String, type: String) throws -> [String: Int] {
    let text = try run(
      [
        "-top", "-lines", "-unit=B", "-nodefraction=0", "-nodecount=100000",
        "-sample_index=\(type)",
      ],
      profile: profile)
    var flat: [String: Int] = [:]
    var inTable = false
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: " ", omittingEmptySubsequences: true)
      if fields.first == "flat" {
        inTable = true
        continue
      }
      // flat flat% sum% cum cum% name…
      guard inTable, fields.count >= 6,
        let value = Int(fields[0].replacingOccurrences(of: "B", with: ""))
      else { continue }
      flat[fields[5...].joined(separator: " "), default: 0] += value
    }
    return flat
  }
}
