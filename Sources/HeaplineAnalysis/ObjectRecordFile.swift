import Glibc

/// The object list's rows in waiting: one fixed-size record per allocation, in allocation
/// order, in an unlinked temporary file.
///
/// Rows must come out in allocation order, but a row is complete only once its block is freed,
/// which may be at the very end. Holding the rows in memory until then would grow with every
/// allocation of the trace; here they wait on disk, and a free patches its record's free time
/// in place, so memory holds one buffer of records and the live blocks' indexes.
final class ObjectRecordFile {
  /// One allocation, as stored: six little-endian 64-bit words.
  struct Record {
    var allocTime: UInt64
    /// ``notFreed`` while the block is live.
    var freeTime: UInt64
    var address: UInt64
    var size: UInt64
    var category: UInt64
    var stack: UInt64

    static let notFreed = UInt64.max
    static let words = 6
  }

  // Accessed once or more per allocation, and only by the pass that owns the file: no dynamic
  // exclusivity checks on them.
  /// Records appended so far.
  @exclusivity(unchecked) private(set) var count: UInt64 = 0
  private let file: UnlinkedFile
  /// Records not written yet; the first is record ``bufferStart``.
  @exclusivity(unchecked) private var buffer: [UInt64] = []
  @exclusivity(unchecked) private var bufferStart: UInt64 = 0
  /// 3 MiB of records. Most blocks die young, and a free whose record is still here costs a
  /// store, not a `pwrite` system call.
  private static let bufferRecords = 65536
  /// Free times of records already in the file, not written there yet: at most
  /// ``patchCapacity`` (4 MiB).
  @exclusivity(unchecked) private var patches: [Patch] = []
  private static let patchCapacity = 1 << 18
  /// The longest run of records that ``applyPatches()`` reads and writes back in one go.
  private static let patchRunRecords: UInt64 = 1024

  private struct Patch {
    var index: UInt64
    var time: UInt64
  }

  init() throws(AnalysisError) {
    file = try UnlinkedFile(named: "heapline-objects")
    buffer.reserveCapacity(Self.bufferRecords * Record.words)
  }

  func append(_ record: Record) throws(AnalysisError) {
    // Stored little endian, as the file is read back.
    buffer.append(record.allocTime.littleEndian)
    buffer.append(record.freeTime.littleEndian)
    buffer.append(record.address.littleEndian)
    buffer.append(record.size.littleEndian)
    buffer.append(record.category.littleEndian)
    buffer.append(record.stack.littleEndian)
    count += 1
    if buffer.count >= Self.bufferRecords * Record.words { try flush() }
  }

  /// Sets the free time of record `index`: in the buffer if it is still there, else later, in
  /// the file, with the other free times waiting for records written out.
  func setFreeTime(of index: UInt64, to time: UInt64) throws(AnalysisError) {
    if index >= bufferStart {
      buffer[Int(index - bufferStart) * Record.words + 1] = time.littleEndian
      return
    }
    patches.append(Patch(index: index, time: time))
    if patches.count >= Self.patchCapacity { try applyPatches() }
  }

  /// Writes the waiting free times into the file, in record order. A `pwrite` per free took
  /// most of the list's time on a trace of millions of blocks; sorted, the frees of a
  /// program's data structure, which usually die together, fall on a few runs of records,
  /// each read and written back whole. A lone free still costs one 8-byte `pwrite`.
  private func applyPatches() throws(AnalysisError) {
    patches.sort { $0.index < $1.index }
    var run: [UInt64] = []
    var start = 0
    while start < patches.count {
      let first = patches[start].index
      var end = start + 1
      while end < patches.count && patches[end].index - first < Self.patchRunRecords { end += 1 }
      let offset = off_t(first) * off_t(Record.words * 8)
      if end - start == 1 {
        try writeAll([patches[start].time.littleEndian], at: offset + 8)
      } else {
        let records = Int(patches[end - 1].index - first) + 1
        run = [UInt64](repeating: 0, count: records * Record.words)
        try readAll(&run, at: offset)
        for patch in patches[start..<end] {
          run[Int(patch.index - first) * Record.words + 1] = patch.time.littleEndian
        }
        try writeAll(run, at: offset)
      }
      start = end
    }
    patches.removeAll(keepingCapacity: true)
  }

  /// Writes the buffered records out.
  func flush() throws(AnalysisError) {
    guard !buffer.isEmpty else { return }
    try writeAll(buffer, at: off_t(bufferStart) * off_t(Record.words * 8))
    bufferStart = count
    buffer.removeAll(keepingCapacity: true)
  }

  /// Calls `body` with every record, in order, reading the file a block at a time.
  func forEachRecord(_ body: (UInt64, Record) throws(AnalysisError) -> Void) throws(AnalysisError) {
    try flush()
    try applyPatches()
    var block = [UInt64](repeating: 0, count: Self.bufferRecords * Record.words)
    var index: UInt64 = 0
    while index < count {
      let records = Int(min(UInt64(Self.bufferRecords), count - index))
      block.removeLast(block.count - records * Record.words)
      try readAll(&block, at: off_t(index) * off_t(Record.words * 8))
      for slot in 0..<records {
        let base = slot * Record.words
        let record = Record(
          allocTime: UInt64(littleEndian: block[base]),
          freeTime: UInt64(littleEndian: block[base + 1]),
          address: UInt64(littleEndian: block[base + 2]),
          size: UInt64(littleEndian: block[base + 3]),
          category: UInt64(littleEndian: block[base + 4]),
          stack: UInt64(littleEndian: block[base + 5]))
        try body(index, record)
        index += 1
      }
    }
  }

  private func writeAll(_ words: [UInt64], at offset: off_t) throws(AnalysisError) {
    try words.withUnsafeBytes { bytes in
      Result { () throws(AnalysisError) in try file.write(bytes, at: offset) }
    }.get()
  }

  /// Fills `words` from the file at `offset`.
  private func readAll(_ words: inout [UInt64], at offset: off_t) throws(AnalysisError) {
    try words.withUnsafeMutableBytes { bytes in
      Result { () throws(AnalysisError) in try file.read(into: bytes, at: offset) }
    }.get()
  }
}
