import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Thousands of damaged copies of one trace, read by every command's code in process: none may
/// crash or hang, and none may give a wrong result without saying so. A copy either fails with
/// a one-line error naming the file and an offset, or reads as a trace cut short (with a notice
/// that says so) that gives exactly what the original cut at its last whole chunk gives, or
/// gives exactly the original's results.
@Suite("Damaged traces fail clearly or read true")
struct TraceDamageFuzzTests {
  /// A deterministic generator (SplitMix64), so every run damages the same bytes.
  struct Seeded: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
      state &+= 0x9E37_79B9_7F4A_7C15
      var z = state
      z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
      z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
      return z ^ (z >> 31)
    }
  }

  /// What the checks counted.
  struct Tally {
    var errors = 0
    var cut = 0
    var identical = 0
  }

  /// Reads damaged copies through one path, so that the expected results can be computed
  /// once per prefix and compared as strings.
  final class Bench {
    let original: [UInt8]
    let boundaries: [Int]
    let path: String
    private var expectedByPrefix: [Int: DamageFixture.Outcome] = [:]
    var tally = Tally()

    init(_ writer: TraceWriter) {
      original = writer.bytes
      boundaries = [TraceConstants.fileHeaderSize] + writer.chunks.map { Int($0.endOffset) }
      path =
        FileManager.default.temporaryDirectory
        .appendingPathComponent("heapline-damage-\(UUID().uuidString).trace").path
    }

    deinit { try? FileManager.default.removeItem(atPath: path) }

    func read(_ bytes: [UInt8]) -> DamageFixture.Outcome {
      FileManager.default.createFile(atPath: path, contents: Data(bytes))
      return DamageFixture.readAll(path)
    }

    /// What the original gives when cut right after the chunk that ends at `boundary`.
    func expected(prefix boundary: Int) -> DamageFixture.Outcome {
      if let known = expectedByPrefix[boundary] { return known }
      let outcome = read(Array(original.prefix(boundary)))
      expectedByPrefix[boundary] = outcome
      return outcome
    }

    /// Checks one damaged copy; `what` says what was done to it, for the failure message.
    func check(_ bytes: [UInt8], _ what: @autoclosure () -> String) {
      let outcome = read(bytes)
      switch outcome {
      case .failed(let message):
        tally.errors += 1
        let isOneLine = !message.contains("\n")
        let namesFileAndOffset = message.contains("'\(path)'") && message.contains("offset")
        #expect(isOneLine && namesFileAndOffset, "\(what()): \(message)")
      case .read(let cut, let isComplete, let notices, let output):
        if isComplete {
          tally.identical += 1
          #expect(outcome == expected(prefix: original.count), "\(what()) read differently")
          return
        }
        tally.cut += 1
        // A trace read as cut short must say so, and give what its whole chunks give.
        let end = Int(cut?.offset ?? UInt64(bytes.count))
        #expect(notices.first?.contains("trace '\(path)'") == true, "\(what()): no notice")
        if let cut {
          #expect(
            notices.first?.contains(
              "cut short: \(cut.bytes) bytes of a partial chunk at offset \(cut.offset)") == true,
            "\(what()): \(notices)")
        }
        guard boundaries.contains(end), Array(bytes.prefix(end)) == Array(original.prefix(end))
        else {
          Issue.record("\(what()) read as cut at \(end), which is not a chunk of the original")
          return
        }
        guard case .read(_, _, _, let expectedOutput) = expected(prefix: end) else {
          Issue.record("\(what()): the original cut at \(end) does not read")
          return
        }
        #expect(output == expectedOutput, "\(what()) cut at \(end) read differently")
      }
    }
  }

  @Test("the undamaged trace gives the figures it was made with")
  func groundTruth() throws {
    let bench = Bench(DamageFixture.writer())
    _ = bench.read(bench.original)  // writes the original to bench.path
    let reader = try TraceReader(path: bench.path)
    let statistics = try Statistics(reader: reader)
    #expect(statistics.totals.allocationCount == DamageFixture.allocations)
    #expect(statistics.totals.freeCount == DamageFixture.frees)
    #expect(statistics.totals.liveBytes == DamageFixture.liveBytes)
    #expect(statistics.trace.lostEvents.total == DamageFixture.lostEvents)
    #expect(statistics.trace.lostEvents.byReason == [.signalHandler: 3, .insideShim: 2])
    #expect(
      try reader.notices() == [
        "trace '\(bench.path)': 5 allocations and frees were not recorded (3 signal handlers"
          + " interrupting the shim, 2 calls made inside the shim's own work): the figures are"
          + " not exact"
      ])
    guard case .read(nil, true, _, let output) = bench.read(bench.original) else {
      Issue.record("the original does not read")
      return
    }
    #expect(!output.contains("error:"), "\(output)")
  }

  @Test("every truncation reads as a cut trace with a notice, or fails at the file header")
  func truncations() {
    let bench = Bench(DamageFixture.writer())
    for length in 0..<bench.original.count {
      bench.check(Array(bench.original.prefix(length)), "cut at \(length)")
    }
    // Only files too short for the file header fail; every other cut reads.
    #expect(bench.tally.errors == TraceConstants.fileHeaderSize)
    #expect(bench.tally.cut == bench.original.count - TraceConstants.fileHeaderSize)
  }

  @Test("every single-bit flip fails with an error naming the file and an offset")
  func bitFlips() {
    let bench = Bench(DamageFixture.writer())
    var random = Seeded(state: 8)
    var flips = Set<Int>()
    while flips.count < 2_000 {
      flips.insert(Int.random(in: 0..<bench.original.count * 8, using: &random))
    }
    for bit in flips.sorted() {
      var bytes = bench.original
      bytes[bit / 8] ^= 1 << UInt8(bit % 8)
      bench.check(bytes, "bit \(bit % 8) of byte \(bit / 8) flipped")
    }
    // A flip in the trailer's length reads as a cut trailer; everything else is an error.
    #expect(bench.tally.identical == 0)
    #expect(bench.tally.errors + bench.tally.cut == flips.count)
    #expect(bench.tally.cut <= 32)
  }

  @Test("chunks removed, duplicated or swapped fail, or read exactly as the original")
  func splices() {
    let writer = DamageFixture.writer()
    let bench = Bench(writer)
    let chunks = writer.chunks.map { Int($0.offset)..<Int($0.endOffset) }
    let trailer = chunks.last!.upperBound..<bench.original.count
    let pieces = chunks + [trailer]
    func file(_ order: [Int]) -> [UInt8] {
      Array(bench.original.prefix(TraceConstants.fileHeaderSize))
        + order.flatMap { bench.original[pieces[$0]] }
    }
    let all = Array(pieces.indices)
    var removals = 0
    for removed in chunks.indices {
      bench.check(file(all.filter { $0 != removed }), "chunk \(removed) removed")
      removals += 1
      bench.check(
        file(all.flatMap { $0 == removed ? [$0, $0] : [$0] }), "chunk \(removed) duplicated")
    }
    // Removals and duplicates change what the trailer counts: all are errors.
    #expect(bench.tally.errors == 2 * removals)
    for first in chunks.indices {
      for second in chunks.indices where second > first {
        var order = all
        order.swapAt(first, second)
        bench.check(file(order), "chunks \(first) and \(second) swapped")
      }
    }
    // Swapping chunks changes nothing the reader depends on: each reads as the original.
    let swaps = chunks.count * (chunks.count - 1) / 2
    #expect(bench.tally.identical == swaps)
  }

  @Test("random overwrites of a few bytes fail clearly or read true")
  func overwrites() {
    let bench = Bench(DamageFixture.writer())
    var random = Seeded(state: 11)
    for round in 0..<1_000 {
      var bytes = bench.original
      let start = Int.random(in: 0..<bytes.count, using: &random)
      let length = Int.random(in: 1...8, using: &random)
      for index in start..<min(bytes.count, start + length) {
        bytes[index] = UInt8.random(in: 0...255, using: &random)
      }
      bench.check(bytes, "round \(round): \(length) bytes at \(start) overwritten")
    }
    #expect(bench.tally.errors + bench.tally.cut + bench.tally.identical == 1_000)
  }
}
