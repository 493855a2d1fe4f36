import HeaplineAnalysis
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

/// Where `record` lets the shim write the trace: never over the program, the preload library
/// or a file that is not a trace, and never to something that is not a regular file. The shim
/// opens the path itself (HEAPLINE_OUTPUT), so checks come first and a new file is created now,
/// for an unwritable path to fail before the program runs.
struct TraceDestination {
  let path: String
  /// The file as it was before the run (nil when this created it): the shim's open, which
  /// truncates, changes its modification time.
  private let before: FileIdentity?
  /// What the trace replaces, for the notice after the run: "the trace", or "the file".
  private let replaced: String?
  /// The file the shim writes, as it was made or found: the shim truncates it, keeping it.
  private let identity: FileIdentity?

  /// Checks `path`. `protected` are the files the trace must not replace (the program, the
  /// preload library); `force` allows replacing a file that is not a trace.
  init(path: String, protected: [String], force: Bool) throws {
    self.path = path
    if let same = FileIdentity.input(among: protected, sameAs: path) {
      throw RecordError("refusing to write the trace over '\(same)' (it is the same file)")
    }
    guard let existing = FileIdentity(path: path) else {
      try Self.makeRoom(at: path, creating: true, after: 0)
      before = nil
      replaced = nil
      identity = FileIdentity(path: path)
      return
    }
    guard existing.isRegularFile else {
      let kind = existing.type == UInt32(S_IFDIR) ? "a directory" : "not a regular file"
      throw RecordError("cannot write trace to '\(path)': it is \(kind)")
    }
    // `-o /dev/stdout` with the output in a file: the program writes there too, over the trace
    for (fd, name) in [(1, "output"), (2, "error"), (0, "input")]
    where FileIdentity(descriptor: Int32(fd)) == existing {
      throw RecordError(
        "refusing to write the trace to '\(path)': it is the standard \(name) that the program "
          + "is given")
    }
    if existing.size == 0 {
      replaced = nil
    } else if Self.isTrace(path) {
      replaced = "the previous trace"
    } else if force {
      replaced = "a file that was not a trace (--force)"
    } else {
      throw RecordError(
        "'\(path)' exists and is not a Heapline trace; refusing to replace it (--force to do so)")
    }
    try Self.makeRoom(at: path, creating: false, after: UInt64(existing.size))
    before = FileIdentity(path: path) ?? existing  // the trial moved its modification time
    identity = existing
  }

  /// Throws when another file has taken the path during the run (another recording to the same
  /// path renamed its own into place): the recorder must then neither append this run's last
  /// events to it nor say that the trace was written. A program that ran `exec` moves its trace
  /// aside and starts a new file at the path (`execed`): then the path's file is this run's.
  func checkNotReplaced(execed: Bool) throws {
    guard !execed, let identity, let now = FileIdentity(path: path), now != identity else { return }
    throw RecordError(
      "'\(path)' was replaced during the run by another file (another recording to the same "
        + "path?): this run's trace is lost, and that file is left as it is")
  }

  /// Opens `path` for writing (`creating` it, new) and tries the room its first chunks need
  /// (roomToWrite); a file it created is removed again when there is none.
  private static func makeRoom(at path: String, creating: Bool, after size: UInt64) throws {
    let fd =
      creating
      ? open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
      : open(path, O_WRONLY | O_CLOEXEC)
    guard fd >= 0 else {
      var reason = String(cString: strerror(errno))
      var link = stat()
      if errno == EEXIST, lstat(path, &link) == 0, link.st_mode & S_IFMT == S_IFLNK {
        reason = "it is a symbolic link to a file that does not exist"
      }
      throw RecordError("cannot write trace to '\(path)': \(reason)")
    }
    let room = roomToWrite(fd, at: size)
    close(fd)
    guard let error = room else { return }
    if creating { unlink(path) }
    throw RecordError("cannot write trace to '\(path)': \(error)")
  }

  /// Why a trace's first chunks could not be written to `fd` (a full disk, a file size
  /// limit), or nil: 64 KiB written past `size` and cut off again. The shim finds out only once
  /// the program runs, and then runs it untraced; a disk that fills later ends the trace with
  /// what was written (`record`'s check that the trace is not cut short).
  private static func roomToWrite(_ fd: Int32, at size: UInt64) -> String? {
    let trial = [UInt8](repeating: 0, count: 64 * 1024)
    var done = 0
    while done < trial.count {
      let wrote = trial.withUnsafeBytes {
        pwrite(fd, $0.baseAddress! + done, trial.count - done, off_t(size) + off_t(done))
      }
      if wrote < 0 && errno == EINTR { continue }
      guard wrote > 0 else {
        let reason = String(cString: strerror(errno))
        _ = ftruncate(fd, off_t(size))
        return reason
      }
      done += wrote
    }
    _ = ftruncate(fd, off_t(size))
    return nil
  }

  /// Whether the file starts with a trace's header: the magic, `HEAPLINE`, and the header's
  /// checksum. The magic alone let `record` replace any file that happened to start with it.
  static func isTrace(_ path: String) -> Bool {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    var header = [UInt8](repeating: 0, count: TraceConstants.fileHeaderSize)
    guard read(fd, &header, header.count) == header.count,
      header.prefix(8).elementsEqual(TraceConstants.fileMagic)
    else { return false }
    let at = TraceConstants.checksumOffset
    let stored = header[at..<at + 4].reversed().reduce(UInt32(0)) { $0 << 8 | UInt32($1) }
    return stored == FNV1a.hash(header.prefix(at))
  }

  /// Whether the shim opened the file: it never does in a program that did not load the
  /// preload library (static or setuid).
  var wasWritten: Bool {
    guard let now = FileIdentity(path: path) else { return false }
    guard let before else { return now.size > 0 }
    return now.modified != before.modified || now.size != before.size
  }

  /// The line that says where the trace went, after the run.
  var notice: String {
    "trace written to \(path)" + (replaced.map { " (it replaced \($0))" } ?? "")
  }

  /// Removes the file made for a program that never ran, or ran without writing it.
  func discardIfUnused() {
    if before == nil && !wasWritten { unlink(path) }
  }
}
