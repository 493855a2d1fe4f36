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

  /// Allocations in each chunk of ``writeRepeating(to:repeats:)``: a whole number of turns of
  /// the addresses (4,096) and of the 16 stacks, so that every chunk after the first is the
  /// same bytes.
  static let repeatedAllocations = 4096 * 122

  /// The same churn, 64 blocks live at most, as a first chunk of ``repeatedAllocations``
  /// allocations and then `repeats` chunks that each repeat one template: its records name
  /// their blocks relative to the chunk (the first 64 frees are of the previous chunk's last 64
  /// blocks), so the template is built once and written again under each chunk's own header
  /// (first alloc counter, base time). A trace of 100 M events takes seconds to write, and its
  /// report must give the same exact figures as ``write(to:allocations:stacks:depth:)``'s.
  static func writeRepeating(to path: String, repeats: Int) throws {
    guard FileManager.default.createFile(atPath: path, contents: nil),
      let file = FileHandle(forWritingAtPath: path)
    else { throw HarnessError("cannot create \(path)") }
    defer { try? file.close() }
    let stacks = 16
    let count = repeatedAllocations
    var writer = TraceWriter()
    func leaf(_ k: Int) -> StackID { StackID(UInt64((k + 1) * 2)) }
    // The first chunk: the stacks, then the churn's first turn.
    var first = writer.makeChunk(threadSerial: 1)
    for k in 0..<stacks {
      first.stack(StackID(UInt64(k * 2 + 1)), parent: .empty, pc: 0x40_0000 + UInt64(k) * 16)
      first.stack(leaf(k), parent: StackID(UInt64(k * 2 + 1)), pc: 0x40_1000 + UInt64(k) * 16)
    }
    // Time moves on by a microsecond every 512 allocations, as a busy thread's TICKs would.
    let span = UInt64(count / 512 + 1) * 1_000
    func churn(_ chunk: inout ChunkBuilder, counterBase: UInt64, freesBefore: Bool) {
      for index in 0..<count {
        let time = UInt64(index / 512) * 1_000
        if index >= liveBlocks || freesBefore {
          chunk.free(
            at: time,
            AllocID(threadSerial: 1, counter: UInt64(Int(counterBase) + index - liveBlocks)))
        }
        chunk.alloc(
          at: time, size: blockSize, address: Address(0x1000_0000 + UInt64(index % 4096) * 64),
          stack: leaf(index % stacks))
      }
    }
    churn(&first, counterBase: 0, freesBefore: false)
    writer.append(first, encoding: .zstd)
    // The template: its first 64 frees are of the chunk before's last 64 blocks.
    var template = writer.makeChunk(threadSerial: 1)
    template.baseTime = 0
    churn(&template, counterBase: UInt64(count), freesBefore: true)
    for turn in stride(from: 1, through: repeats, by: 1) {
      template.firstAllocCounter = UInt64(turn * count)
      template.baseTime = UInt64(turn) * span
      writer.append(template, encoding: .zstd)
      try file.write(contentsOf: writer.takeBytes())
    }
    writer.appendTrailer(endTime: UInt64(repeats + 1) * span)
    try file.write(contentsOf: writer.takeBytes())
  }
}

