import Foundation
import HeaplineTrace

/// A trace of `allocations` blocks of 48 bytes from `stacks` distinct stacks of `depth` frames
/// in turn,
/// each freed 64 allocations later, streamed to `path` chunk by chunk so that the test's own
/// memory does not grow with the trace.
///
/// The figures a report must give are exact: `allocations` allocations of 48 bytes,
/// `allocations - 64` frees, 64 blocks (3,072 B) live at the end and at the peak.
enum SyntheticChurnTrace {
  static let liveBlocks = 64
  static let blockSize: UInt64 = 48

  static func write(to path: String, allocations: Int, stacks: Int = 16, depth: Int = 2) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let file = FileHandle(forWritingAtPath: path)
    else { throw HarnessError("cannot create \(path)") }
    defer { try? file.close() }
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    // Stack k is a chain of its own `depth` nodes, ids k*depth+1 (the root) to (k+1)*depth.
    func leaf(_ k: Int) -> StackID { StackID(UInt64((k + 1) * depth)) }
    for k in 0..<stacks {
      var parent = StackID.empty
      for level in 0..<depth {
        let id = StackID(UInt64(k * depth + level + 1))
        chunk.stack(id, parent: parent, pc: 0x40_0000 + UInt64(level) * 0x1000 + UInt64(k) * 16)
        parent = id
      }
    }
    var window = [AllocID](
      repeating: AllocID(threadSerial: 0, counter: 0), count: liveBlocks)
    for index in 0..<allocations {
      let time = UInt64(index) * 2
      if index >= liveBlocks { chunk.free(at: time, window[index % liveBlocks]) }
      window[index % liveBlocks] = chunk.alloc(
        at: time + 1, size: blockSize, address: Address(0x1000_0000 + UInt64(index % 4096) * 64),
        stack: leaf(index % stacks))
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
