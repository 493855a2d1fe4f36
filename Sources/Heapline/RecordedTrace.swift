#if canImport(Glibc)
  import Glibc
#endif

/// The trace file behind a ``Recording``, kept as long as any copy of the recording is, so
/// that timelines and generations can read it again. A temporary trace is removed with the
/// last copy.
final class RecordedTrace: Sendable {
  let path: String
  let isTemporary: Bool

  init(path: String, isTemporary: Bool) {
    self.path = path
    self.isTemporary = isTemporary
  }

  deinit {
    if isTemporary { unlink(path) }
  }
}
