import Glibc

/// A file as the kernel knows it: device and inode, so that two paths (hard links, symbolic
/// links, `./a` and `a`) name the same file exactly when their identities are equal.
package struct FileIdentity: Equatable {
  package let device: UInt64
  package let inode: UInt64
  /// The file type bits of `st_mode` (S_IFREG, S_IFDIR, S_IFCHR…).
  package let type: UInt32
  package let mode: UInt32
  package let size: Int64
  /// The time of the last change to the contents, in nanoseconds since the epoch.
  package let modified: Int64

  /// The identity of the file that `path` names (following symbolic links), or nil when there
  /// is none.
  package init?(path: String) {
    var info = stat()
    guard stat(path, &info) == 0 else { return nil }
    self.init(info)
  }

  /// The identity of an open descriptor's file, or nil when fstat fails.
  package init?(descriptor: Int32) {
    var info = stat()
    guard fstat(descriptor, &info) == 0 else { return nil }
    self.init(info)
  }

  private init(_ info: stat) {
    device = UInt64(info.st_dev)
    inode = UInt64(info.st_ino)
    type = UInt32(info.st_mode) & UInt32(S_IFMT)
    mode = UInt32(info.st_mode) & 0o7777
    size = Int64(info.st_size)
    modified = Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)
  }

  package var isRegularFile: Bool { type == UInt32(S_IFREG) }

  package static func == (a: FileIdentity, b: FileIdentity) -> Bool {
    a.device == b.device && a.inode == b.inode
  }

  /// The first of `inputs` that is the same file as `path`, when `path` exists.
  package static func input(among inputs: [String], sameAs path: String) -> String? {
    guard let output = FileIdentity(path: path) else { return nil }
    return inputs.first { FileIdentity(path: $0) == output }
  }
}
