import Glibc

/// What an ELF file on disk says of where its debug information is: the name of a separate
/// debug file (its `.gnu_debuglink`), and whether part of it is split off into `.dwo` files or
/// a `.dwp` package, which a symbolizer reads as well.
///
/// ```swift
/// ELFDebugInfo.read(path: "/usr/lib/x86_64-linux-gnu/libc.so.6")?.debugLink  // "ac61….debug"
/// ```
public struct ELFDebugInfo: Hashable, Sendable {
  /// The name in `.gnu_debuglink`, which symbolizers look for beside the file, in `.debug`
  /// beside it and under `/usr/lib/debug`; `nil` without one.
  public var debugLink: String?
  /// Whether the file's debug information may be split DWARF: a unit is a DWARF 5 skeleton, it
  /// has the GNU pubnames that split DWARF 4 comes with, or its `.debug_info` is compressed and
  /// cannot be looked at cheaply.
  public var mayBeSplit: Bool

  /// Reads the section headers of the file at `path`; `nil` when it cannot be read or is not a
  /// 64-bit little-endian ELF file.
  public static func read(path: String) -> ELFDebugInfo? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let header = ELFBuildID.fileHeader(descriptor) else { return nil }
    let sections = ELFBuildID.integer(header, at: 40, size: 8)
    let entrySize = Int(ELFBuildID.integer(header, at: 58, size: 2))
    let entryCount = Int(ELFBuildID.integer(header, at: 60, size: 2))
    let namesIndex = Int(ELFBuildID.integer(header, at: 62, size: 2))
    guard entrySize >= 64, entryCount < 65_536, namesIndex < entryCount,
      let table = ELFBuildID.bytes(descriptor, offset: sections, count: entrySize * entryCount)
    else { return nil }
    func field(_ index: Int, _ offset: Int, _ size: Int) -> UInt64 {
      ELFBuildID.integer(table, at: index * entrySize + offset, size: size)
    }
    func contents(of index: Int, limit: UInt64) -> [UInt8]? {
      guard field(index, 32, 8) <= limit else { return nil }
      return ELFBuildID.bytes(
        descriptor, offset: field(index, 24, 8), count: Int(field(index, 32, 8)))
    }
    guard let names = contents(of: namesIndex, limit: 1 << 20) else { return nil }
    func name(of index: Int) -> String {
      let start = Int(field(index, 0, 4))
      guard start < names.count else { return "" }
      let end = names[start...].firstIndex(of: 0) ?? names.count
      return String(decoding: names[start..<end], as: UTF8.self)
    }
    var info = ELFDebugInfo(debugLink: nil, mayBeSplit: false)
    for index in 0..<entryCount {
      switch name(of: index) {
      case ".gnu_debuglink":
        if let link = contents(of: index, limit: 4096), let end = link.firstIndex(of: 0), end > 0 {
          info.debugLink = String(decoding: link[..<end], as: UTF8.self)
        }
      case ".debug_gnu_pubnames":
        info.mayBeSplit = true
      case ".debug_info":
        let compressed = field(index, 8, 8) & 0x800 != 0  // SHF_COMPRESSED
        let start = field(index, 24, 8), size = field(index, 32, 8)
        let header = { ELFBuildID.bytes(descriptor, offset: start + $0, count: 15) }
        if compressed || Self.hasSkeletonUnit(size: size, read: header) { info.mayBeSplit = true }
      default:
        break
      }
    }
    return info
  }

  /// Whether a unit of a `.debug_info` of `size` bytes is a DWARF 5 skeleton (`DW_UT_skeleton`),
  /// whose body is in a `.dwo` file. `read` gives the 15 bytes at an offset in the section (a
  /// unit header at most): each unit's header is read, and its body skipped. A header that
  /// cannot be read or makes no sense, or units past the first 100,000, count as a skeleton.
  static func hasSkeletonUnit(size: UInt64, read: (UInt64) -> [UInt8]?) -> Bool {
    var at: UInt64 = 0
    for _ in 0..<100_000 {
      guard at < size else { return false }
      guard let header = read(at), header.count == 15 else { return true }
      var length = ELFBuildID.integer(header, at: 0, size: 4)
      var fields = 4
      if length == 0xFFFF_FFFF {  // 64-bit DWARF
        length = ELFBuildID.integer(header, at: 4, size: 8)
        fields = 12
      }
      if ELFBuildID.integer(header, at: fields, size: 2) >= 5, header[fields + 2] == 0x04 {
        return true
      }
      guard length > 0, length <= size - at - UInt64(fields) else { return true }
      at += UInt64(fields) + length
    }
    return true
  }
}
