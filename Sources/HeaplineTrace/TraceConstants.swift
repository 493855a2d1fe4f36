/// Constants of the trace file format, version 6.
///
/// The layout they describe is documented in <doc:TraceFormat>. The C shim writes the same
/// values; change both sides together and bump ``version`` when the layout changes.
public enum TraceConstants {
  /// The eight bytes every trace starts with: ASCII `HEAPLINE`.
  public static let fileMagic: [UInt8] = Array("HEAPLINE".utf8)
  /// The format version the writer produces, and the newest this reader understands.
  public static let version: UInt16 = 6
  /// The oldest format version this reader understands: version 6 only deepened version 5's
  /// address model, which reads version 5 alike; version 5 added records of its own and kept
  /// version 4's, and a version 3 trace is a version 4 trace whose chunks carry no flags,
  /// so traces recorded before version 5 still read.
  public static let oldestReadableVersion: UInt16 = 3
  /// Size of the file header; the first chunk starts here.
  public static let fileHeaderSize = 48
  /// Magic number at the start of every chunk: the bytes `HLCK` read as a little-endian u32.
  public static let chunkMagic: UInt32 = 0x4B43_4C48
  /// Size of a chunk header; the payload follows it.
  public static let chunkHeaderSize = 48
  /// The bytes of a header (file or chunk) that its checksum at this offset covers.
  public static let checksumOffset = 44
  /// Size of the trailer chunk's payload.
  public static let trailerPayloadSize = 64
  /// Category ids from here up are named by a CATEGORY record; below are size classes.
  public static let firstNamedCategory: UInt32 = 0x400
  /// Flag bit in the file header: the trace was recorded in process (`Heapline.record`).
  public static let recordedInProcessFlag: UInt32 = 1 << 0
  /// Upper bound on a chunk's raw payload length. The shim's buffers are far smaller; the cap
  /// keeps a corrupt length field from making the reader allocate gigabytes.
  public static let maximumRawPayloadLength = 1 << 30
  /// Allocation info ids are below this (the shim's bound, 2^20): a reader keeps infos in an
  /// array by id, which a corrupt id must not make huge.
  public static let infoLimit: UInt64 = 1 << 20
}

/// The kind of a chunk, from byte 4 of its header.
public enum ChunkKind: UInt8, Sendable {
  /// A chunk of records written by one thread.
  case events = 1
  /// The last chunk of a cleanly finished trace.
  case trailer = 2
  /// The frames of the trace's stacks, symbolized when `heapline record` finished, just
  /// before the trailer (see ``StoredSymbols``). Traces without one read as before.
  case symbols = 3
}

/// What a chunk's header says of its payload, from bytes 6 and 7 of the header.
public struct ChunkFlags: OptionSet, Hashable, Sendable {
  public let rawValue: UInt16
  public init(rawValue: UInt16) { self.rawValue = rawValue }

  /// The payload holds no STACK, PC or MODULE record, so a reader that wants only the trace's
  /// stacks and modules can skip it without decompressing it. (In version 4 the bit said that
  /// the payload held allocations and frees only, which implies it.)
  public static let noStacksOrModules = ChunkFlags(rawValue: 1 << 0)

  /// The payload starts with a side section: its length as a varint, then records that the
  /// events after it need first (INFO, PC, STACK, TICK). Version 5.
  public static let sideSection = ChunkFlags(rawValue: 1 << 1)

  /// Every flag this reader knows; a header with another bit set is rejected.
  public static let known: ChunkFlags = [.noStacksOrModules, .sideSection]
}

/// How a chunk's payload is stored, from byte 5 of its header.
public enum PayloadEncoding: UInt8, Sendable {
  /// The payload bytes are the records.
  case raw = 0
  /// The payload is zstd frames (one, or one for the side section and one for the events) that
  /// decompress to the records.
  case zstd = 1
}

/// The one-byte tag that starts every record of an events chunk. Version 4's ALLOC, FREE,
/// STACK and FREE_NEAR (`0x01` to `0x03`, `0x0A`) are read, no longer written; version 5's
/// ALLOC is `0x40` with the address code in its low four bits.
enum RecordTag: UInt8 {
  case alloc = 0x01
  case free = 0x02
  case stack = 0x03
  case category = 0x04
  case module = 0x05
  case rss = 0x06
  case mark = 0x07
  case lost = 0x08
  case swiftType = 0x09
  case freeNear = 0x0A
  case freeFar = 0x0B
  case freeHere = 0x0C
  case freeOther = 0x0D
  case allocExplicit = 0x0E
  case leakScan = 0x10
  case leakBlock = 0x11
  case leakEdge = 0x12
  case leakGraph = 0x13
  case leakRoot = 0x14
  case leakNode = 0x15
  case leakFailed = 0x16
  case backingAlloc = 0x20
  case backingFree = 0x21
  case warning = 0x22
  case warningResponse = 0x23
  case footprint = 0x24
  case memoryLimit = 0x25
  case sampling = 0x26
  case counts = 0x27
  case carried = 0x28
  case carriedCounts = 0x29
  case rssPeak = 0x2A
  case allocCoded = 0x40
  case tick = 0x50
  case info = 0x51
  case pc = 0x52
  case stackNode = 0x53

  /// The tag of a byte, folding version 5's ALLOC codes `0x40`…`0x4F` into ``allocCoded``.
  @inline(__always)
  init?(byte: UInt8) {
    self.init(rawValue: byte & 0xF0 == 0x40 ? 0x40 : byte)
  }
}
