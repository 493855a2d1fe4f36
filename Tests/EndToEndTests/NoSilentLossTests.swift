import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Whatever the shim cannot record is counted, in the trace and on stderr; what it can, it does,
/// however many threads and however little memory (Fixtures/crowd.c).
@Suite struct NoSilentLossTests {
  @Test func twentyThousandDetachedThreadsAreAllRecorded() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("crowd", in: dir)
    let trace = dir.appendingPathComponent("crowd.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "threads"])
    #expect(result.status == 0)
    #expect(result.stdout == "threads 20000 blocks 40000\n")
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.lostEvents == 0)
    let stats = try Statistics(reader: reader)
    let blocks = try #require(stats.category(named: "Malloc 1008 Bytes"))
    #expect(blocks.totalCount == 40_000)
    #expect(blocks.persistentBytes == 40_000_000)
  }

  @Test func aThreadThatEndsWhileTheRecordingStopsKeepsWhatItRecorded() throws {
    // Given a thread whose end falls while the process exits and the recording stops: its
    // exit wrote its buffer only while recording, and the final flush then found it given up
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("lateexit", in: dir)
    let trace = dir.appendingPathComponent("late.trace").path
    for delay in ["0", "2000", "5000", "9000", "0", "2000", "5000", "9000", "0", "2000"] {
      let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, delay])
      #expect(result.status == 0)
      // Then its 100 blocks are in the trace, every time
      let stats = try Statistics(reader: TraceReader(path: trace))
      #expect(stats.category(named: "Malloc 320 Bytes")?.totalCount == 100, "delay \(delay)")
    }
  }

  @Test func whenTheShimsTablesCannotGrowTheLossIsCountedAndSaid() throws {
    // Given a program that leaves the shim no address space to grow its tables in, while its
    // own 400,000 blocks come from a heap it grew beforehand
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("crowd", in: dir)
    let untraced = try Harness.run(program, ["tight"])
    #expect(untraced.stdout == "made 400000\n")
    let trace = dir.appendingPathComponent("tight.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "tight"])
    // The program does what it does untraced
    #expect(result.status == 0)
    #expect(result.stdout == untraced.stdout)
    // Every allocation is in the trace; the blocks the live table could not hold (whose frees
    // the shim could not see) are counted, in LOST records and the trailer alike, and said
    let reader = try TraceReader(path: trace)
    let lost = try #require(reader.trailer?.lostEvents)
    try #require(lost > 0, "the fixture must make the shim's tables run out of room")
    var stream = reader.events()
    try stream.drainMetadata()
    #expect(stream.metadata.lostEvents[.outOfMemory] == lost)
    #expect(result.stderr.contains("some allocations could not be recorded"))
    let stats = try Statistics(reader: reader)
    let blocks = try #require(stats.category(named: "Malloc 32 Bytes"))
    #expect(blocks.totalCount == 400_000)
    #expect(blocks.totalBytes == 400_000 * 24)
  }
}
