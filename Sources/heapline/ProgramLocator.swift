#if canImport(Glibc)
  import Glibc
#endif

/// Finds the programs and files that `record` needs.
enum ProgramLocator {
  /// The path of `program`, searched on PATH as a shell would when it has no slash.
  static func resolve(_ program: String) -> String? {
    if program.contains("/") { return isExecutable(program) ? program : nil }
    let path = String(cString: getenv("PATH") ?? strdup("/usr/bin:/bin"))
    for directory in path.split(separator: ":") {
      let candidate = "\(directory.isEmpty ? "." : String(directory))/\(program)"
      if isExecutable(candidate) { return candidate }
    }
    return nil
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

  private static func isExecutable(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG && access(path, X_OK) == 0
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

/// A failure of `record` before or around the program's run.
struct RecordError: Error, CustomStringConvertible {
  let description: String
  init(_ description: String) { self.description = description }
}

/// Checks on the trace file around a recording.
enum TraceFileCheck {
  /// Creates or truncates `path` now, so that an unwritable path fails before the program runs.
  static func prepare(_ path: String) throws {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else {
      throw RecordError("cannot write trace to '\(path)': \(String(cString: strerror(errno)))")
    }
    close(fd)
  }

  static func isEmpty(_ path: String) -> Bool {
    var info = stat()
    return stat(path, &info) != 0 || info.st_size == 0
  }
}
