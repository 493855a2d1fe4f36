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

  /// Prepares to write `path`; `nil` or `-` writes to standard output. Throws when `path` is
  /// the same file as one of `inputs` (by device and inode, so hard links count), or a
  /// directory. Devices and pipes (`/dev/null`) are written in place.
  public init(path: String?, inputs: [String] = []) throws(AnalysisError) {
    guard let path, path != "-" else {
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

/// A temporary file beside the file it will replace. It is removed unless committed, when the
/// output is abandoned because its command failed.
private final class PendingFile {
  let descriptor: Int32
  private let target: String
  private let temporary: String
  private let mode: mode_t
  private var done = false

  /// `mode`: the permissions of the file replaced, or nil for a new file (0644 less umask).
  init(replacing path: String, mode: UInt32?) throws(AnalysisError) {
    // A symbolic link stays a link: the file it points to is the one replaced.
    let target =
      realpath(path, nil).map { resolved in
        defer { free(resolved) }
        return String(cString: resolved)
      } ?? path
    self.target = target
    let slash = target.lastIndex(of: "/")
    let directory = slash.map { String(target[...$0]) } ?? ""
    let name = slash.map { String(target[target.index(after: $0)...]) } ?? target
    var template = Array("\(directory).\(name).XXXXXX".utf8CString)
    descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    guard descriptor >= 0 else {
      throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
    }
    _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
    temporary = String(cString: template)
    if let mode {
      self.mode = mode_t(mode)
    } else {
      let mask = umask(0)
      umask(mask)
      self.mode = 0o644 & ~mask
    }
  }

  func commit() throws(AnalysisError) {
    var failure: Int32?
    if fchmod(descriptor, mode) != 0 { failure = errno }
    // close reports a failed write-back on some file systems.
    if Glibc.close(descriptor) != 0, failure == nil { failure = errno }
    if failure == nil, rename(temporary, target) != 0 { failure = errno }
    done = true
    if let failure {
      unlink(temporary)
      throw AnalysisError.outputFailed(path: target, String(cString: strerror(failure)))
    }
  }

  deinit {
    guard !done else { return }
    _ = Glibc.close(descriptor)
    unlink(temporary)
  }
}
