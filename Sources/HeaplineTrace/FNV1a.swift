/// 32-bit FNV-1a, the checksum of the file header and of each chunk (header and payload).
///
/// Chosen over CRC32 because the shim computes it in a few lines without tables, and it only
/// has to catch torn or overwritten chunks, not adversaries.
public enum FNV1a {
  /// The offset basis, the hash of no bytes.
  public static let offsetBasis: UInt32 = 0x811C_9DC5
  /// The FNV-1a 32-bit prime.
  public static let prime: UInt32 = 0x0100_0193

  /// Returns the FNV-1a hash of `bytes`; with `start`, of the bytes hashed into `start`
  /// followed by `bytes`.
  ///
  /// ```swift
  /// FNV1a.hash(Array("a".utf8)) // 0xE40C292C
  /// ```
  public static func hash<Bytes: Sequence>(_ bytes: Bytes, continuing start: UInt32 = offsetBasis)
    -> UInt32 where Bytes.Element == UInt8
  {
    var hash = start
    for byte in bytes {
      hash = (hash ^ UInt32(byte)) &* prime
    }
    return hash
  }
}
