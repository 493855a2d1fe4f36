import Glibc
import HeaplineTrace

/// A timeline's rows as its pass makes them, before the columns are known: each row's totals,
/// the live bytes of every category and backing-store category that changed since the row
/// before, and its marks, as varints. They wait in memory up to 4 MiB, and past that in an
/// unlinked file (``UnlinkedFile``), so a timeline of any length holds the same memory.
struct TimelineRowStore {
  /// A row as stored: its totals and marks as ``TimelineRow`` holds them, without columns,
  /// and the categories whose live bytes changed in it, by the pass's slots, with their bytes
  /// at its end.
  struct Row {
    var row: TimelineRow
    var categories: [(slot: Int, bytes: UInt64)]
    /// Backing-store categories likewise.
    var backingStores: [(slot: Int, bytes: UInt64)]
  }

  private var buffer = ByteWriter()
  private var file: UnlinkedFile?
  private var fileLength: off_t = 0
  private static let bufferBytes = 4 << 20
  /// Bytes of rows that went to the file.
  var bytesOnDisk: Int { Int(fileLength) }

  mutating func append(_ stored: Row) throws(AnalysisError) {
    let row = stored.row
    for value in [
      row.endTime, row.liveBytes, row.liveBlocks, row.allocationCount, row.freeCount,
      row.peakLiveBytes, row.backingStoreBytes, row.rssBytes == nil ? 0 : 1,
    ] {
      buffer.appendVarint(value)
    }
    if let rss = row.rssBytes { buffer.appendVarint(rss) }
    for pairs in [stored.categories, stored.backingStores] {
      buffer.appendVarint(UInt64(pairs.count))
      for (slot, bytes) in pairs {
        buffer.appendVarint(UInt64(slot))
        buffer.appendVarint(bytes)
      }
    }
    buffer.appendVarint(UInt64(row.marks.count))
    for mark in row.marks { buffer.appendLengthPrefixed(Array(mark.utf8)) }
    if buffer.bytes.count >= Self.bufferBytes { try spill() }
  }

  /// Calls `body` with each row, in the order stored.
  func forEach(_ body: (Row) throws(AnalysisError) -> Void) throws(AnalysisError) {
    var block: [UInt8] = []
    var offset: off_t = 0
    var reader = Reader()
    // A row can straddle two blocks: the bytes left over start the next one.
    while offset < fileLength {
      let length = Int(min(off_t(Self.bufferBytes), fileLength - offset))
      var read = [UInt8](repeating: 0, count: length)
      try read.withUnsafeMutableBytes { bytes in
        Result { () throws(AnalysisError) in try file!.read(into: bytes, at: offset) }
      }.get()
      offset += off_t(length)
      block = Array(block[reader.position...]) + read
      reader = Reader()
      while let row = reader.row(in: block, final: false) { try body(row) }
    }
    block = Array(block[reader.position...]) + buffer.bytes
    reader = Reader()
    while let row = reader.row(in: block, final: true) { try body(row) }
  }

  private mutating func spill() throws(AnalysisError) {
    if file == nil { file = try UnlinkedFile(named: "heapline-timeline") }
    let at = fileLength
    try buffer.bytes.withUnsafeBytes { bytes in
      Result { () throws(AnalysisError) in try file!.write(bytes, at: at) }
    }.get()
    fileLength += off_t(buffer.bytes.count)
    buffer = ByteWriter()
  }

  /// Decodes rows from a block of stored bytes. A row cut by the block's end is left for the
  /// next block (`final` false); the store wrote every row whole, so in the last block none is.
  private struct Reader {
    var position = 0

    mutating func row(in bytes: [UInt8], final: Bool) -> Row? {
      var cursor = ByteCursor(bytes, position: position)
      do {
        let fields = try (0..<8).map { _ throws(ByteCursor.Failure) in try cursor.readVarint() }
        let rss = fields[7] == 0 ? nil : try cursor.readVarint()
        func pairs() throws(ByteCursor.Failure) -> [(slot: Int, bytes: UInt64)] {
          try (0..<cursor.readVarint()).map { _ throws(ByteCursor.Failure) in
            (Int(try cursor.readVarint()), try cursor.readVarint())
          }
        }
        let categories = try pairs(), backingStores = try pairs()
        let marks = try (0..<cursor.readVarint()).map { _ throws(ByteCursor.Failure) in
          String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
        }
        position = cursor.position
        var row = TimelineRow(endTime: fields[0])
        (row.liveBytes, row.liveBlocks, row.allocationCount) = (fields[1], fields[2], fields[3])
        (row.freeCount, row.peakLiveBytes) = (fields[4], fields[5])
        row.backingStoreBytes = fields[6]
        row.rssBytes = rss
        row.marks = marks
        return Row(row: row, categories: categories, backingStores: backingStores)
      } catch {
        precondition(!final || position == bytes.count, "a timeline row was stored whole")
        return nil
      }
    }
  }
}
