#if canImport(Glibc)
  import Glibc
#endif

/// Finds the programs and files that `record` needs.
enum ProgramLocator {
  /// The path of `program`, searched on PATH as a shell would when it has no slash. Throws a
  /// ``RecordError`` with status 127 when there is no such file, and 126 when there is one
  /// that cannot be executed (as `env` does).
  static func resolve(_ program: String) throws -> String {
    var candidates = [program]
    if !program.contains("/") {
      let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
      candidates = path.split(separator: ":", omittingEmptySubsequences: false).map {
        "\($0.isEmpty ? "." : String($0))/\(program)"
      }
    }
    var refusal: String?
    for candidate in candidates {
      var info = stat()
      guard stat(candidate, &info) == 0 else { continue }
      if (info.st_mode & S_IFMT) == S_IFDIR {
        refusal = refusal ?? "'\(candidate)': it is a directory"
      } else if access(candidate, X_OK) != 0 {
        refusal = refusal ?? "'\(candidate)': it is not executable"
      } else {
        return candidate
      }
    }
    if let refusal { throw RecordError("cannot run \(refusal)", status: 126) }
    throw RecordError("program '\(program)' not found", status: 127)
  }

  /// The preload library: $HEAPLINE_PRELOAD, or libheapline-preload.so beside this executable.
  static func preloadLibrary() throws -> String {
    if let explicit = getenv("HEAPLINE_PRELOAD") {
      let path = String(cString: explicit)
      guard access(path, R_OK) == 0 else {
        throw RecordError("HEAPLINE_PRELOAD names '\(path)', which cannot be read")
      }
      return absolute(path)
    }
    let beside = executableDirectory() + "/libheapline-preload.so"
    guard access(beside, R_OK) == 0 else {
      throw RecordError(
        "preload library not found at \(beside): build it with Tools/build-preload.sh")
    }
    return beside
  }

  static func absolute(_ path: String) -> String {
    if path.hasPrefix("/") { return path }
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    guard getcwd(&buffer, buffer.count) != nil else { return path }
    return text(buffer) + "/" + path
  }

  private static func executableDirectory() -> String {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX))
    let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
    guard n > 0 else { return "." }
    let path = text(buffer)
    return String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)])
  }

  /// The NUL-terminated text in a C buffer.
  static func text(_ buffer: [CChar]) -> String {
    String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
}

/// A failure of `record` before or around the program's run, with heapline's exit status for
/// it: 125 for heapline's own failure, 126 when the program cannot be executed, 127 when it is
/// not found (as `env` and `timeout` have them).
struct RecordError: Error, CustomStringConvertible {
  let description: String
  let status: Int32
  init(_ description: String, status: Int32 = 125) {
    self.description = description
    self.status = status
  }
}
