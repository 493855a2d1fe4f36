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

  /// Records appended so far.
  private(set) var count: UInt64 = 0
  private let descriptor: Int32
  private let path: String
  /// Records not written yet; the first is record ``bufferStart``.
  private var buffer: [UInt64] = []
  private var bufferStart: UInt64 = 0
  private static let bufferRecords = 4096

  init() throws(AnalysisError) {
    let directory = getenv("TMPDIR").map { String(cString: $0) } ?? "/tmp"
    var template = Array("\(directory)/heapline-objects-XXXXXX".utf8CString)
    let fd = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
    path = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
    guard fd >= 0 else {
      throw AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
    }
    // Unlinked at once: the file goes away with the descriptor, whatever happens.
    unlink(path)
    descriptor = fd
    buffer.reserveCapacity(Self.bufferRecords * Record.words)
  }

  deinit {
    close(descriptor)
  }

  func append(_ record: Record) throws(AnalysisError) {
    // Stored little endian, as the file is read back.
    buffer += [
      record.allocTime, record.freeTime, record.address, record.size, record.category,
      record.stack,
    ].map(\.littleEndian)
    count += 1
    if buffer.count >= Self.bufferRecords * Record.words { try flush() }
  }

  /// Sets the free time of record `index`: in the buffer if it is still there, else in the
  /// file.
  func setFreeTime(of index: UInt64, to time: UInt64) throws(AnalysisError) {
    if index >= bufferStart {
      buffer[Int(index - bufferStart) * Record.words + 1] = time.littleEndian
      return
    }
    var value = time.littleEndian
    let offset = off_t(index) * off_t(Record.words * 8) + 8
    let written = withUnsafeBytes(of: &value) { pwrite(descriptor, $0.baseAddress, 8, offset) }
    guard written == 8 else { throw failure() }
  }

  /// Writes the buffered records out.
  func flush() throws(AnalysisError) {
    guard !buffer.isEmpty else { return }
    let offset = off_t(bufferStart) * off_t(Record.words * 8)
    let length = buffer.count * 8
    var done = 0
    while done < length {
      let result = buffer.withUnsafeBytes { bytes in
        pwrite(descriptor, bytes.baseAddress! + done, length - done, offset + off_t(done))
      }
      if result < 0 && errno == EINTR { continue }
      guard result > 0 else { throw failure() }
      done += result
    }
    bufferStart = count
    buffer.removeAll(keepingCapacity: true)
  }

  /// Calls `body` with every record, in order, reading the file a block at a time.
  func forEachRecord(_ body: (UInt64, Record) throws(AnalysisError) -> Void) throws(AnalysisError) {
    try flush()
    var block = [UInt64](repeating: 0, count: Self.bufferRecords * Record.words)
    var index: UInt64 = 0
    while index < count {
      let records = Int(min(UInt64(Self.bufferRecords), count - index))
      let length = records * Record.words * 8
      let offset = off_t(index) * off_t(Record.words * 8)
      var done = 0
      while done < length {
        let result = block.withUnsafeMutableBytes { bytes in
          pread(descriptor, bytes.baseAddress! + done, length - done, offset + off_t(done))
        }
        if result < 0 && errno == EINTR { continue }
        guard result > 0 else { throw failure() }
        done += result
      }
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

  private func failure() -> AnalysisError {
    AnalysisError.outputFailed(path: path, String(cString: strerror(errno)))
  }
}
