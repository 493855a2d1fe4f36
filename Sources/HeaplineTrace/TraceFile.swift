import Glibc

/// A read-only file descriptor read with `pread`, so the reader fetches chunk headers and
/// payloads where they lie without loading the file or sharing a file position.
final class TraceFile: Sendable {
  let path: String
  private let descriptor: Int32
  /// The file's size when it was opened; a trace still being written is read up to here.
  let size: UInt64

  init(path: String) throws(TraceError) {
    self.path = path
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer forever. The flag does
    // nothing to the reads of a regular file, the only kind accepted below.
    let descriptor = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
    guard descriptor >= 0 else {
      throw TraceError(path: path, reason: .cannotOpen(Self.systemMessage(errno)))
    }
    var status = stat()
    guard fstat(descriptor, &status) == 0 else {
      let message = Self.systemMessage(errno)
      close(descriptor)
      throw TraceError(path: path, reason: .cannotOpen(message))
    }
    guard status.st_mode & S_IFMT == S_IFREG else {
      close(descriptor)
      throw TraceError(path: path, reason: .cannotOpen("not a regular file"))
    }
    self.descriptor = descriptor
    self.size = UInt64(max(0, status.st_size))
  }

  deinit {
    close(descriptor)
  }

  /// Reads exactly `count` bytes at `offset`. The caller has checked that they lie inside
  /// ``size``; a file that shrank since then is a read failure.
  func read(at offset: UInt64, count: Int) throws(TraceError) -> [UInt8] {
    guard count > 0 else { return [] }
    var bytes = [UInt8](repeating: 0, count: count)
    var done = 0
    while done < count {
      let result = bytes.withUnsafeMutableBytes { buffer in
        pread(descriptor, buffer.baseAddress! + done, count - done, off_t(offset) + off_t(done))
      }
      if result < 0 {
        if errno == EINTR { continue }
        throw TraceError(
          path: path, reason: .readFailed(offset: offset, Self.systemMessage(errno)))
      }
      if result == 0 {
        throw TraceError(
          path: path, reason: .readFailed(offset: offset, "file shrank while it was read"))
      }
      done += result
    }
    return bytes
  }

  private static func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
  }
}
