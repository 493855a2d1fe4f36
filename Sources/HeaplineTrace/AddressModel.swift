/// What a version 5 chunk's records let a reader predict of an allocation's address: an ALLOC
/// names its address by a four-bit code against this model, and the shim keeps the same model
/// (`model.h`) over the same records, so both agree on every address.
///
/// glibc gives a request the block of its size class freed last, or carves it from the heap
/// right after the block carved before. So the model keeps, per size class, the last sixteen
/// blocks freed in the chunk (newest last; version 5 kept eight, and reads alike: its codes never
/// name a block past the eighth), and where the last carved block ends. It starts
/// empty with every chunk. See <doc:TraceFormat>, "Addresses".
struct AddressModel {
  /// Size classes: chunk size / 16 up to 1,040 bytes, and class 0 above.
  static let bins = 66
  /// Freed blocks kept per class.
  static let depth = 16
  /// The class's newest freed block.
  static let newest: UInt8 = 0
  /// Where the last carved block ends.
  static let carved: UInt8 = 1
  /// Codes 2 to 14 name the class's second to fourteenth newest freed block (to eighth in
  /// version 5, which kept eight); 15 an address given as a delta from the carve point.
  static let deepest: UInt8 = 14
  static let escape: UInt8 = 15

  private var carve: UInt64 = 0
  private var counts = [UInt8](repeating: 0, count: bins)
  private var slots = [UInt64](repeating: 0, count: bins * depth)

  /// glibc's chunk size for a request: the size and an 8-byte header, in 16-byte granules, 32
  /// at least (past 2^60, the size itself).
  @inline(__always)
  static func chunkBytes(_ size: UInt64) -> UInt64 {
    if size >> 60 != 0 { return size }
    let bytes = (size &+ 8 &+ 15) & ~15
    return bytes < 32 ? 32 : bytes
  }

  @inline(__always)
  static func bin(_ size: UInt64) -> Int {
    let bytes = chunkBytes(size)
    return bytes <= 1040 ? Int(bytes >> 4) : 0
  }

  /// The address that `code` names for a block of `size` bytes (`delta` is the escape's), with
  /// the model moved past it; `nil` when the code names nothing (a damaged record).
  @inline(__always)
  mutating func address(code: UInt8, size: UInt64, delta: Int64) -> UInt64? {
    let bin = Self.bin(size)
    let n = Int(counts[bin])
    switch code {
    case Self.newest:
      guard n > 0 else { return nil }
      counts[bin] = UInt8(n - 1)
      return slots[bin * Self.depth + n - 1]
    case Self.carved:
      let address = carve
      carve = address &+ Self.chunkBytes(size)
      return address
    case Self.escape:
      let address = UInt64(bitPattern: Int64(bitPattern: carve) &+ delta)
      carve = address &+ Self.chunkBytes(size)
      return address
    case 2...Self.deepest:
      let k = Int(code)
      guard k <= n else { return nil }
      let base = bin * Self.depth
      let address = slots[base + n - k]
      for j in (n - k)..<(n - 1) { slots[base + j] = slots[base + j + 1] }
      counts[bin] = UInt8(n - 1)
      return address
    default:
      return nil
    }
  }

  /// The code of an allocation at `address` of `size` bytes, with the model moved past it, as
  /// the shim encodes it; for ``escape`` also the carve point its delta is taken from. A reader
  /// calls it for an ALLOC that spells its address out, to move the model the same way.
  @discardableResult
  mutating func code(of address: UInt64, size: UInt64) -> (code: UInt8, carve: UInt64) {
    let bin = Self.bin(size)
    let n = Int(counts[bin])
    let base = bin * Self.depth
    if n > 0 && slots[base + n - 1] == address {
      counts[bin] = UInt8(n - 1)
      return (Self.newest, carve)
    }
    let before = carve
    if address == carve {
      carve = address &+ Self.chunkBytes(size)
      return (Self.carved, before)
    }
    if n >= 2 {
      for k in 2...min(n, Int(Self.deepest)) where slots[base + n - k] == address {
        for j in (n - k)..<(n - 1) { slots[base + j] = slots[base + j + 1] }
        counts[bin] = UInt8(n - 1)
        return (UInt8(k), before)
      }
    }
    carve = address &+ Self.chunkBytes(size)
    return (Self.escape, before)
  }

  /// A block allocated in this chunk was freed: the newest of its class, the oldest dropped
  /// when the class is full.
  @inline(__always)
  mutating func freed(_ address: UInt64, size: UInt64) {
    freed(address, bin: Self.bin(size))
  }

  /// A block of class `bin` (see ``bin(_:)``) was freed.
  @inline(__always)
  mutating func freed(_ address: UInt64, bin: Int) {
    var n = Int(counts[bin])
    let base = bin * Self.depth
    if n == Self.depth {
      for j in 0..<(Self.depth - 1) { slots[base + j] = slots[base + j + 1] }
      n -= 1
    }
    slots[base + n] = address
    counts[bin] = UInt8(n + 1)
  }
}
