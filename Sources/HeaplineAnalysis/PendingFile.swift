import Glibc

/// O_TMPFILE, which Glibc's Swift module lacks (it is a _GNU_SOURCE macro): __O_TMPFILE |
/// O_DIRECTORY, the same on every Linux architecture that Swift runs on.
private let openTemporaryFile: Int32 = 0o20_000_000 | O_DIRECTORY

/// A temporary file beside the file it will replace, removed unless committed (when the output
/// is abandoned because its command failed). It is made with O_TMPFILE where the file system
/// allows, so it has no name until it is complete, and a process killed meanwhile leaves
/// nothing behind; elsewhere it is a named file from mkstemp.
final class PendingFile {
  let descriptor: Int32
  private let target: String
  /// The start of a temporary name beside the target: `dir/.name.`.
  private let prefix: String
  /// The temporary file's name, once it has one.
  private var temporary: String?
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
    prefix = "\(directory).\(name)."
    let nameless = open(
      directory.isEmpty ? "." : directory, openTemporaryFile | O_WRONLY | O_CLOEXEC, 0o600)
    if nameless >= 0 {
      descriptor = nameless
    } else {
      var template = Array("\(prefix)XXXXXX".utf8CString)
      descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
      guard descriptor >= 0 else {
        throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
      }
      _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
      temporary = String(cString: template)
    }
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
    if failure == nil, temporary == nil { failure = linkNameless() }
    // close reports a failed write-back on some file systems.
    if Glibc.close(descriptor) != 0, failure == nil { failure = errno }
    if failure == nil, let temporary, rename(temporary, target) != 0 { failure = errno }
    done = true
    if let failure {
      if let temporary { unlink(temporary) }
      throw AnalysisError.outputFailed(path: target, String(cString: strerror(failure)))
    }
  }

  /// Gives the O_TMPFILE file a fresh temporary name beside the target, for the rename that
  /// replaces the target in one step. Returns nil, or the errno value.
  private func linkNameless() -> Int32? {
    let source = "/proc/self/fd/\(descriptor)"
    for attempt in 0..<1000 {
      let name = "\(prefix)\(getpid()).\(attempt)"
      if linkat(AT_FDCWD, source, AT_FDCWD, name, AT_SYMLINK_FOLLOW) == 0 {
        temporary = name
        return nil
      }
      if errno != EEXIST { return errno }
    }
    return EEXIST
  }

  deinit {
    guard !done else { return }
    _ = Glibc.close(descriptor)
    if let temporary { unlink(temporary) }
  }
}
