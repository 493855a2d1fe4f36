import Glibc

/// A ``TextOutput`` that writes a file, or standard output, through a 64 KiB buffer.
///
/// ```swift
/// var output = try FileOutput(path: "timeline.csv")  // nil for stdout
/// try output.write("time_s,live_bytes\r\n")
/// try output.close()
/// ```
public struct FileOutput: TextOutput {
  /// The path written, or `-` for standard output.
  public let path: String
  private let descriptor: Int32
  private var buffer: [UInt8] = []
  private static let capacity = 64 * 1024

  /// Creates (or truncates) the file at `path`; `nil` or `-` writes to standard output.
  public init(path: String?) throws(AnalysisError) {
    guard let path, path != "-" else {
      self.path = "-"
      descriptor = STDOUT_FILENO
      return
    }
    self.path = path
    descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard descriptor >= 0 else {
      throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
    }
    buffer.reserveCapacity(Self.capacity)
  }

  public mutating func write(_ text: String) throws(AnalysisError) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= Self.capacity { try flush() }
  }

  /// Writes the buffer out.
  public mutating func flush() throws(AnalysisError) {
    var done = 0
    while done < buffer.count {
      let result = buffer.withUnsafeBytes { bytes in
        Glibc.write(descriptor, bytes.baseAddress! + done, bytes.count - done)
      }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        let name = path == "-" ? "standard output" : path
        throw AnalysisError.outputFailed(path: name, String(cString: strerror(errno)))
      }
      done += result
    }
    buffer.removeAll(keepingCapacity: true)
  }

  /// Flushes, and closes the file (standard output stays open).
  public mutating func close() throws(AnalysisError) {
    try flush()
    if descriptor != STDOUT_FILENO { _ = Glibc.close(descriptor) }
  }
}
