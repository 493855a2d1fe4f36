import Glibc

/// A ``TextOutput`` that writes a file, or standard output, through a 64 KiB buffer.
///
/// A file is written to a temporary file beside it and renamed into place by ``close()``, so a
/// failure leaves the old file as it was and no temporary file behind. An output that is one of
/// the inputs is refused.
///
/// ```swift
/// var output = try FileOutput(path: "timeline.csv", inputs: ["app.trace"])  // nil for stdout
/// try output.write("time_s,live_bytes\r\n")
/// try output.close()
/// ```
public struct FileOutput: TextOutput {
  /// The path written, or `-` for standard output.
  public let path: String
  private let descriptor: Int32
  private let pending: PendingFile?
  private var buffer: [UInt8] = []
  private static let capacity = 64 * 1024

  /// Prepares to write `path`; `nil` or `-` writes to standard output. Throws when `path`, or
  /// standard output, is the same file as one of `inputs` (by device and inode, so hard links
  /// count), or a directory. Devices and pipes (`/dev/null`) are written in place.
  public init(path: String?, inputs: [String] = []) throws(AnalysisError) {
    guard let path, path != "-" else {
      // `objects app.trace >> app.trace` appended to the trace it read, which no command could
      // read after
      if let input = FileIdentity.input(among: inputs, sameAs: "/proc/self/fd/1") {
        throw AnalysisError.outputFailed(
          path: "standard output", "it is the input '\(input)'; write the output to another file")
      }
      self.path = "-"
      descriptor = STDOUT_FILENO
      pending = nil
      return
    }
    self.path = path
    if let input = FileIdentity.input(among: inputs, sameAs: path) {
      throw AnalysisError.outputFailed(
        path: path, "it is the input '\(input)'; write the output to another file")
    }
    let existing = FileIdentity(path: path)
    if let existing, existing.type == UInt32(S_IFDIR) {
      throw AnalysisError.outputFailed(path: path, "it is a directory")
    }
    if let existing, !existing.isRegularFile {
      descriptor = open(path, O_WRONLY | O_CLOEXEC)
      pending = nil
    } else {
      pending = try PendingFile(replacing: path, mode: existing?.mode)
      descriptor = pending!.descriptor
    }
    guard descriptor >= 0 else {
      throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
    }
    buffer.reserveCapacity(Self.capacity)
  }

  public mutating func write(_ text: String) throws(AnalysisError) {
    buffer.append(contentsOf: text.utf8)
    if buffer.count >= Self.capacity { try flush() }
  }

  /// Appends `bytes` as they are: for a binary output, a gzipped profile.
  public mutating func write(bytes: [UInt8]) throws(AnalysisError) {
    try bytes.withUnsafeBufferPointer { bytes throws(AnalysisError) in try write(utf8: bytes) }
  }

  public mutating func write(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(AnalysisError) {
    buffer.append(contentsOf: bytes)
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

  /// Flushes, and puts the file in place (standard output stays open).
  public mutating func close() throws(AnalysisError) {
    try flush()
    if let pending {
      try pending.commit()
    } else if descriptor != STDOUT_FILENO {
      _ = Glibc.close(descriptor)
    }
  }
}
