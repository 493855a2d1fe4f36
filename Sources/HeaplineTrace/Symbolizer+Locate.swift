import Glibc

extension Symbolizer {
  /// Finds `llvm-symbolizer`: `HEAPLINE_SYMBOLIZER` if set, else the one next to `swift` on
  /// `PATH` (the toolchain's, which matches the Swift version of the traced code), else any
  /// `llvm-symbolizer` on `PATH`.
  ///
  /// Setting `HEAPLINE_SYMBOLIZER` to the empty string turns symbolization off, which keeps
  /// output independent of the machine (for golden tests, say).
  public static func locateTool(environment: [String: String] = currentEnvironment()) -> String? {
    if let configured = environment["HEAPLINE_SYMBOLIZER"] {
      return isExecutable(configured) ? configured : nil
    }
    let directories = (environment["PATH"] ?? "").split(separator: ":").map(String.init)
    for directory in directories where isExecutable(directory + "/swift") {
      for swift in [directory + "/swift", resolvingLinks(directory + "/swift")] {
        let candidate = parentDirectory(of: swift) + "/llvm-symbolizer"
        if isExecutable(candidate) { return candidate }
      }
    }
    for directory in directories where isExecutable(directory + "/llvm-symbolizer") {
      return directory + "/llvm-symbolizer"
    }
    return nil
  }

  /// The process environment, read from `environ`.
  public static func currentEnvironment() -> [String: String] {
    var result: [String: String] = [:]
    var entry = environ
    while let pointer = entry.pointee {
      let text = String(cString: pointer)
      if let equals = text.firstIndex(of: "=") {
        result[String(text[..<equals])] = String(text[text.index(after: equals)...])
      }
      entry += 1
    }
    return result
  }

  private static func isExecutable(_ path: String) -> Bool {
    !path.isEmpty && access(path, X_OK) == 0
  }

  private static func resolvingLinks(_ path: String) -> String {
    guard let resolved = realpath(path, nil) else { return path }
    defer { free(resolved) }
    return String(cString: resolved)
  }

  private static func parentDirectory(of path: String) -> String {
    guard let slash = path.lastIndex(of: "/") else { return "." }
    return String(path[..<slash])
  }
}
