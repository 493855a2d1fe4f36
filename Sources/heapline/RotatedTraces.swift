#if canImport(Glibc)
  import Glibc
#endif

/// The files of a rotated recording (`record --rotate`): for `-o server.trace`, the shim writes
/// `server.0001-20261123T221500Z.trace`, `server.0002-….trace`, …: the path less a final
/// `.trace`, a sequence number from 0001 (so that `ls` sorts them) and the file's start in UTC.
enum RotatedTraces {
  /// The seconds `--rotate` accepts, and the scheme its help states.
  static let scheme = "PATH less .trace, then .NNNN-YYYYMMDDTHHMMSSZ.trace"

  /// The files of the recording to `path`, in sequence order, as the directory holds them now.
  static func files(of path: String) -> [String] {
    let (directory, prefix) = split(path)
    guard let dir = opendir(directory.isEmpty ? "." : directory) else { return [] }
    defer { closedir(dir) }
    var found: [(sequence: Int, path: String)] = []
    while let entry = readdir(dir) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
      }
      guard let sequence = sequence(of: name, prefix: prefix) else { continue }
      found.append((sequence, directory.isEmpty ? name : directory + "/" + name))
    }
    return found.sorted { $0.sequence < $1.sequence }.map(\.path)
  }

  /// Before a recording: removes the files an earlier rotated recording to the same path left,
  /// as long as they are traces, so that none is mistaken for this run's.
  static func clear(of path: String) {
    let old = files(of: path).filter { TraceDestination.isTrace($0) && unlink($0) == 0 }
    if !old.isEmpty {
      CLIOutput.note(
        "removed \(old.count) rotated trace(s) that an earlier recording to \(path) left")
    }
  }

  /// `NNNN` of `PREFIX.NNNN-YYYYMMDDTHHMMSSZ.trace`, or nil for any other name.
  static func sequence(of name: String, prefix: String) -> Int? {
    guard name.hasPrefix(prefix + "."), name.hasSuffix(".trace") else { return nil }
    let middle = name.dropFirst(prefix.count + 1).dropLast(6)
    let parts = middle.split(separator: "-", omittingEmptySubsequences: false)
    guard parts.count == 2, parts[0].count >= 4, parts[0].allSatisfy(\.isASCII),
      let sequence = Int(parts[0]), sequence > 0, parts[1].count == 16, parts[1].last == "Z"
    else { return nil }
    return sequence
  }

  /// The directory (empty for the current one) and the name's stem, less a final `.trace`.
  private static func split(_ path: String) -> (String, String) {
    var stem = Substring(path)
    if stem.hasSuffix(".trace") && stem.count > 6 { stem = stem.dropLast(6) }
    guard let slash = stem.lastIndex(of: "/") else { return ("", String(stem)) }
    let directory = String(stem[..<slash])
    return (directory.isEmpty ? "/" : directory, String(stem[stem.index(after: slash)...]))
  }
}
