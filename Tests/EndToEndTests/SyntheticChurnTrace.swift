import Foundation
import HeaplineTrace

/// A trace of `allocations` blocks of 48 bytes from one of `stacks` distinct two-frame stacks,
/// each freed 64 allocations later, streamed to `path` chunk by chunk so that the test's own
/// memory does not grow with the trace.
///
/// The figures a report must give are exact: `allocations` allocations of 48 bytes,
/// `allocations - 64` frees, 64 blocks (3,072 B) live at the end and at the peak.
enum SyntheticChurnTrace {
  static let liveBlocks = 64
  static let blockSize: UInt64 = 48

  static func write(to path: String, allocations: Int, stacks: Int = 16) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let file = FileHandle(forWritingAtPath: path)
    else { throw HarnessError("cannot create \(path)") }
    defer { try? file.close() }
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    // Stack k is (root k, then leaf k): ids 2k+1 and 2k+2.
    for k in 0..<stacks {
      let root = StackID(UInt64(2 * k + 1))
      chunk.stack(root, parent: .empty, pc: 0x40_0000 + UInt64(k) * 16)
      chunk.stack(StackID(UInt64(2 * k + 2)), parent: root, pc: 0x50_0000 + UInt64(k) * 16)
    }
    var window = [AllocID](
      repeating: AllocID(threadSerial: 0, counter: 0), count: liveBlocks)
    for index in 0..<allocations {
      let time = UInt64(index) * 2
      if index >= liveBlocks { chunk.free(at: time, window[index % liveBlocks]) }
      window[index % liveBlocks] = chunk.alloc(
        at: time + 1, size: blockSize, address: Address(0x1000_0000 + UInt64(index % 4096) * 64),
        stack: StackID(UInt64(2 * (index % stacks) + 2)))
      if chunk.recordCount >= 50_000 {
        writer.append(chunk, encoding: .zstd)
        try file.write(contentsOf: writer.takeBytes())
        chunk = writer.makeChunk(threadSerial: 1)
      }
    }
    writer.append(chunk, encoding: .zstd)
    writer.appendTrailer(endTime: UInt64(allocations) * 2)
    try file.write(contentsOf: writer.takeBytes())
  }
}
