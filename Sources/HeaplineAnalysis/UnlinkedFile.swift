import Glibc

/// A temporary file with no name: made in `TMPDIR` and unlinked at once, so it goes away with
/// its descriptor whatever happens. Where a pass must hold more than its memory should (the
/// object list's rows, a timeline's), the rest waits here.
final class UnlinkedFile {
  /// The name the file had, for messages.
  let path: String
  private let descriptor: Int32

  /// A new, empty file; `name` starts its name.
  init(named name: String) throws(AnalysisError) {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(directory)/\(name)-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard fd >= 0 else {
      throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
    }
    unlink(path)
    descriptor = fd
  }

  deinit { close(descriptor) }

  /// Writes all of `bytes` at `offset`.
  func write(_ bytes: UnsafeRawBufferPointer, at offset: off_t) throws(AnalysisError) {
    try transferAll(bytes.count) { done in
      pwrite(descriptor, bytes.baseAddress! + done, bytes.count - done, offset + off_t(done))
    }
  }

  /// Fills `bytes` from `offset`.
  func read(into bytes: UnsafeMutableRawBufferPointer, at offset: off_t) throws(AnalysisError) {
    try transferAll(bytes.count) { done in
      pread(descriptor, bytes.baseAddress! + done, bytes.count - done, offset + off_t(done))
    }
  }

  /// Calls `transfer` with the bytes moved so far (one pread or pwrite of the rest) until all
  /// `length` have moved, again after an interrupted call.
  private func transferAll(_ length: Int, _ transfer: (Int) -> Int) throws(AnalysisError) {
    var done = 0
    while done < length {
      let result = transfer(done)
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else {
        // A read past the end returns 0 with errno unchanged: say so rather than "Success".
        let reason = result == 0 ? "the file ended early" : String(cString: strerror(errno))
        throw AnalysisError.outputFailed(path: path, reason)
      }
      done += result
    }
  }
}
