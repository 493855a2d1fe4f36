import Foundation
import HeaplineTrace
import Testing

/// The shim stamps events with the time-stamp counter scaled to `CLOCK_MONOTONIC` (clock.c):
/// the stamps must still be the kernel's clock, before the first calibration and long after.
@Suite struct EventTimeTests {
  @Test func anAllocationIsStampedBetweenTheClockReadingsAroundIt() throws {
    // Given a program that allocates a block of 7,000 + i bytes between two readings of
    // CLOCK_MONOTONIC at once, and again after waits of 5 ms to 1.2 s (the shim calibrates its
    // counter 16 ms after the start, then at doubling intervals)
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("clocked", in: dir)
    let trace = dir.appendingPathComponent("clocked.trace")
    let waits = ["5", "30", "60", "150", "400", "1200"]
    let result = try Harness.heapline(
      ["record", "--no-symbols", "-o", trace.path, "--", program] + waits)
    #expect(result.status == 0)
    let readings = result.stdout.split(separator: "\n").map {
      $0.split(separator: " ").compactMap { UInt64($0) }
    }
    #expect(readings.count == waits.count + 1)
    // When the trace is read
    let reader = try TraceReader(path: trace.path)
    var stamps: [UInt64: UInt64] = [:]
    var events = reader.events()
    while let event = try events.next() {
      if case .alloc(let block) = event, (7000...7006).contains(block.size) {
        stamps[block.size - 7000] = reader.header.startMonotonicNanoseconds + block.time
      }
    }
    // Then each block's time lies between the readings around it, less the 1,024 ns grain of
    // allocation times, within 50 µs (a counter scaled 1 % wrong would be 12 ms off by the end)
    #expect(stamps.count == readings.count)
    for reading in readings where reading.count == 3 {
      let stamp = try #require(stamps[reading[0]])
      #expect(stamp + 1_024 + 50_000 >= reading[1], "block \(reading[0]) stamped early")
      #expect(stamp <= reading[2] + 50_000, "block \(reading[0]) stamped late")
    }
  }
}
