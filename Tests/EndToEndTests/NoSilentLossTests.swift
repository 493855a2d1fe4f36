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

  @Test func categoriesPastTheShimsRoomCountInTheirSizeClassAndTheTraceSaysSo() throws {
    // Given 4,200 scopes named s0 to s4199, one block of 40 bytes made in each and kept: more
    // names than the shim has room for (4,096)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("manyscopes", in: dir)
    let trace = dir.appendingPathComponent("scopes.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "4200"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the first 4,096 scopes hold their block, the other 104 blocks count in their size
    // class, and the trailer says that the categories were full
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.flags.contains(.categoriesFull) == true)
    let stats = try Statistics(reader: reader)
    let scopes = stats.categories.filter { $0.kind == .scope }
    #expect(scopes.count == 4_096)
    #expect(scopes.allSatisfy { $0.persistentCount == 1 && $0.persistentBytes == 40 })
    #expect(stats.category(named: "s4095")?.persistentCount == 1)
    #expect(stats.category(named: "s4096") == nil)
    #expect(stats.category(named: "Malloc 48 Bytes")?.persistentCount == 104)
    // And the report says so
    let report = try Harness.heapline(["report", trace])
    #expect(report.stdout.contains("  Categories full: the shim had no room for more classes"))
  }
}
