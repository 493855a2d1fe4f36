import Glibc

/// Reads the `.gnu_debuglink` section of an ELF file on disk: the name of the file that holds
/// its separate debug information, which symbolizers look for beside it, in `.debug` beside it
/// and under `/usr/lib/debug`.
///
/// ```swift
/// ELFDebugLink.name(path: "/usr/lib/x86_64-linux-gnu/libc.so.6")  // "ac61ec….debug", or nil
/// ```
public enum ELFDebugLink {
  /// The debug file's name, or `nil` for a file without the section or one that cannot be read.
  public static func name(path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let header = ELFBuildID.bytes(descriptor, offset: 0, count: 64), header.count == 64,
      header.starts(with: [0x7f, 0x45, 0x4c, 0x46]), header[4] == 2, header[5] == 1
    else { return nil }
    let sections = ELFBuildID.integer(header, at: 40, size: 8)
    let entrySize = Int(ELFBuildID.integer(header, at: 58, size: 2))
    let entryCount = Int(ELFBuildID.integer(header, at: 60, size: 2))
    let namesIndex = Int(ELFBuildID.integer(header, at: 62, size: 2))
    guard entrySize >= 64, entryCount < 65_536, namesIndex < entryCount,
      let table = ELFBuildID.bytes(descriptor, offset: sections, count: entrySize * entryCount)
    else { return nil }
    func contents(of index: Int, limit: UInt64) -> [UInt8]? {
      let entry = index * entrySize
      let size = ELFBuildID.integer(table, at: entry + 32, size: 8)
      guard size <= limit else { return nil }
      return ELFBuildID.bytes(
        descriptor, offset: ELFBuildID.integer(table, at: entry + 24, size: 8), count: Int(size))
    }
    guard let names = contents(of: namesIndex, limit: 1 << 20) else { return nil }
    let wanted = Array(".gnu_debuglink".utf8) + [0]
    for index in 0..<entryCount {
      let at = Int(ELFBuildID.integer(table, at: index * entrySize, size: 4))
      guard at + wanted.count <= names.count, names[at..<at + wanted.count].elementsEqual(wanted),
        let link = contents(of: index, limit: 4096), let end = link.firstIndex(of: 0), end > 0
      else { continue }
      return String(decoding: link[..<end], as: UTF8.self)
    }
    return nil
  }
}
