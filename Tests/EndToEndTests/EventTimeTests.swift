import Foundation
import HeaplineTrace
import Testing

/// The shim stamps events with the time-stamp counter scaled to `CLOCK_MONOTONIC` (clock.c):
/// the stamps must still be the kernel's clock, before the first calibration and long after.
@Suite struct EventTimeTests {
  @Test func anAllocationIsStampedBetweenTheClockReadingsAroundIt() throws {
    // Given a program that allocates a block of 7,000 + i bytes between two readings of
    // CLOCK_MONOTONIC at once, and again after waits of 5 ms to 1.2 s (the shim calibrates its
    // counter 2 ms after the start, then at doubling intervals)
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

  /// A marker of Fixtures/ticking.c: its size, the clock readings around it and when all threads
  /// were running, and its stamp, times in nanoseconds of CLOCK_MONOTONIC.
  struct Marker {
    var size, before, after, started, stamp: UInt64
    var thread: UInt64 { (size - 100_000) / 10_000 }
  }

  func markers(threads: Int, milliseconds: Int = 60) throws -> [Marker] {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("ticking", in: dir)
    let trace = dir.appendingPathComponent("ticking.trace")
    let result = try Harness.heapline(
      [
        "record", "--no-symbols", "--no-leaks", "-o", trace.path, "--", program, "\(threads)",
        "\(milliseconds)",
      ])
    #expect(result.status == 0, "\(result.stderr)")
    let reader = try TraceReader(path: trace.path)
    var stamps: [UInt64: UInt64] = [:]
    var events = reader.events()
    while let event = try events.next() {
      if case .alloc(let block) = event, block.size >= 100_000 {
        stamps[block.size] = reader.header.startMonotonicNanoseconds + block.time
      }
    }
    let lines = result.stdout.split(separator: "\n").map {
      $0.split(separator: " ").compactMap { UInt64($0) }
    }
    #expect(lines.count > 20 * threads)
    return try lines.map {
      Marker(
        size: $0[0], before: $0[1], after: $0[2], started: $0[3],
        stamp: try #require(stamps[$0[0]], "no block of \($0[0]) bytes"))
    }
  }

  /// The markers made while every thread had been running for the 3 ms before: each thread's
  /// markers in that window leave no gap over half a millisecond. Each thread marks its slot in
  /// the shim's table within a millisecond of running and once a millisecond after, so the other
  /// finds it within two and every thread has stamped to the grain since. A loaded machine takes a
  /// thread off its core for milliseconds at a time, and a thread left alone is stamped to the
  /// millisecond only, as it should be.
  func markersWhileAllRan(_ markers: [Marker], threads: Int) -> [Marker] {
    let window: UInt64 = 3_000_000
    let gap: UInt64 = 500_000
    let times = (0..<threads).map { t in
      markers.filter { $0.thread == UInt64(t) }.map(\.before).sorted()
    }
    return markers.filter { marker in
      guard marker.before > marker.started + window else { return false }
      return times.allSatisfy { readings in
        var last = marker.before - window
        for time in readings where time > last && time <= marker.before {
          if time - last > gap { return false }
          last = time
        }
        return marker.before - last <= gap
      }
    }
  }

  @Test func aThreadThatAllocatesAloneIsStampedToTheMillisecondAndNeverLate() throws {
    // Given one thread that allocates without pause for 60 ms, with marker blocks between
    // readings of the clock; when the trace is read, each marker's time is its thread's last
    // TICK's: at most 1 ms (975 grains, and the grain) before the reading before it, and never
    // after the reading after it (50 µs allowed for the counter's scaling, as above)
    for marker in try markers(threads: 1) {
      #expect(marker.stamp + 975 * 1_024 + 1_024 + 50_000 >= marker.before, "\(marker.size) early")
      #expect(marker.stamp <= marker.after + 50_000, "\(marker.size) stamped late")
    }
  }

  @Test func threadsThatAllocateAtOnceAreStampedToTheGrain() throws {
    // Given two threads that allocate at once, for 60 ms, or longer until more than 20 markers
    // come while both have run for 3 ms (on a machine busy with other work, the two seldom run
    // together: 960 ms gave none once); then every such marker is stamped to the 1,024 ns grain
    var settled: [Marker] = []
    for milliseconds in [60, 240, 960, 3_840] where settled.count <= 20 {
      settled = markersWhileAllRan(try markers(threads: 2, milliseconds: milliseconds), threads: 2)
    }
    #expect(settled.count > 20)
    for marker in settled {
      #expect(marker.stamp + 1_024 + 50_000 >= marker.before, "\(marker.size) stamped early")
      #expect(marker.stamp <= marker.after + 50_000, "\(marker.size) stamped late")
    }
  }

  @Test(arguments: [0, 3])
  func aQueueOfEightBlocksPeaksAtEightWhenItsConsumerPausesAndComesBack(hogs: Int) throws {
    // Given a producer that hands blocks of 72 bytes to a consumer through 8 slots, and goes on
    // allocating alone while the consumer stops for 12 ms after every 1,000 (Fixtures/queued.c:
    // no more than 8 such blocks are ever live, and each free comes 4 µs before the allocation
    // it makes room for; the slots fill while the consumer stops); with 3 threads spinning
    // beside them, as on a loaded machine, each was descheduled long enough for the other's
    // mark to look stale, and the queue peaked at about 240
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("queued", in: dir)
    let trace = dir.appendingPathComponent("queued.trace")
    let result = try Harness.heapline(
      ["record", "--no-symbols", "--no-leaks", "-o", trace.path, "--", program, "20000", "\(hogs)"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "passed 20000\n")
    // When the trace's events are read in the reader's order, the one every analysis uses
    var live: Set<AllocID> = []
    var peak = 0
    var made = 0
    var events = try TraceReader(path: trace.path).events()
    while let event = try events.next() {
      switch event {
      case .alloc(let block) where block.size == 72:
        live.insert(block.id)
        made += 1
        peak = max(peak, live.count)
      case .free(let free): live.remove(free.id)
      default: break
      }
    }
    // Then at the peak 8 are live. The previous shim stamped the producer's allocations up to a
    // millisecond early just after the consumer came back (it looked for other threads in one
    // shared word, which the producer alone had swapped for the last 12 ms, and took itself to
    // be alone for a millisecond more), so they came before the frees that made room for them:
    // the peak was about 200.
    #expect(made == 20_000)
    #expect(live.isEmpty)
    #expect(peak == 8)
  }
}
