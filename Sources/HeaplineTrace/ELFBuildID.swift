import Glibc

/// Reads the `NT_GNU_BUILD_ID` note of an ELF file on disk, to tell whether it is still the
/// file a trace recorded: a rebuilt binary at the same path has another build ID, and its
/// symbols would name the wrong functions.
///
/// ```swift
/// ELFBuildID.read(path: "/usr/lib/libc.so.6")  // [0x1f, 0x8a, …], or nil
/// ```
public enum ELFBuildID {
  /// The build ID of the ELF file at `path`; an empty array for an ELF file without one;
  /// `nil` when the file cannot be read or is not a 64-bit little-endian ELF file.
  public static func read(path: String) -> [UInt8]? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    guard let header = fileHeader(descriptor) else { return nil }
    let programHeaders = integer(header, at: 32, size: 8)
    let entrySize = integer(header, at: 54, size: 2)
    let entryCount = integer(header, at: 56, size: 2)
    guard entrySize >= 56, entryCount < 4096,
      let table = bytes(descriptor, offset: programHeaders, count: Int(entrySize * entryCount))
    else { return nil }
    for index in 0..<Int(entryCount) {
      let entry = index * Int(entrySize)
      guard entry + 56 <= table.count, integer(table, at: entry, size: 4) == 4 else {  // PT_NOTE
        continue
      }
      let offset = integer(table, at: entry + 8, size: 8)
      let size = integer(table, at: entry + 32, size: 8)
      guard size < 1 << 20, let notes = bytes(descriptor, offset: offset, count: Int(size)) else {
        continue
      }
      if let id = buildID(inNotes: notes) { return id }
    }
    return []
  }

  /// Walks the notes of a `PT_NOTE` segment: 4-byte name and descriptor sizes and type, then
  /// the name and the descriptor, each padded to 4 bytes.
  static func buildID(inNotes notes: [UInt8]) -> [UInt8]? {
    var at = 0
    while at + 12 <= notes.count {
      let nameSize = Int(integer(notes, at: at, size: 4))
      let descriptorSize = Int(integer(notes, at: at + 4, size: 4))
      let type = integer(notes, at: at + 8, size: 4)
      let name = at + 12
      let descriptor = name + (nameSize + 3) & ~3
      let next = descriptor + (descriptorSize + 3) & ~3
      guard next <= notes.count, descriptor + descriptorSize <= notes.count else { return nil }
      // NT_GNU_BUILD_ID, from the owner "GNU\0".
      if type == 3, nameSize == 4, Array(notes[name..<name + 4]) == [0x47, 0x4e, 0x55, 0] {
        return Array(notes[descriptor..<descriptor + descriptorSize])
      }
      at = next
    }
    return nil
  }

  /// The 64-byte file header of the ELF file open as `descriptor`, when it is a 64-bit
  /// little-endian one.
  static func fileHeader(_ descriptor: Int32) -> [UInt8]? {
    guard let header = bytes(descriptor, offset: 0, count: 64),
      header.starts(with: [0x7f, 0x45, 0x4c, 0x46]), header[4] == 2, header[5] == 1
    else { return nil }
    return header
  }

  static func bytes(_ descriptor: Int32, offset: UInt64, count: Int) -> [UInt8]? {
    guard count >= 0, offset < UInt64(Int64.max) else { return nil }
    var buffer = [UInt8](repeating: 0, count: count)
    let read = buffer.withUnsafeMutableBytes {
      pread(descriptor, $0.baseAddress, count, off_t(offset))
    }
    return read == count ? buffer : nil
  }

  static func integer(_ bytes: [UInt8], at offset: Int, size: Int) -> UInt64 {
    (0..<size).reduce(UInt64(0)) { value, index in
      value | UInt64(bytes[offset + index]) << (8 * UInt64(index))
    }
  }
}
