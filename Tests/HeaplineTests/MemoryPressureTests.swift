import Heapline
import HeaplineAnalysis
import HeaplineTrace
import Synchronization
import Testing

#if canImport(Glibc)
  import Glibc
#endif

/// Memory warnings raised in process, and the observers that answer them.
///
/// Observers are process-wide and tests run in parallel, so every test that raises a warning
/// does it inside `Heapline.record`, which takes turns: no two warnings overlap a recording.
@Suite(.serialized) struct MemoryPressureTests {
  @Test func aSimulatedWarningRunsEveryObserverAndIsRecorded() throws {
    // Given two observers that free 1,000 and 250 bytes a warning, and note the level
    let levels = Mutex<[MemoryPressure.Level]>([])
    let first = MemoryPressure.addObserver(named: "MemoryPressureTests.first") { level in
      levels.withLock { $0.append(level) }
      return 1_000
    }
    let second = MemoryPressure.addObserver(named: "MemoryPressureTests.second") { _ in 250 }
    defer {
      first.cancel()
      second.cancel()
    }
    // When an urgent warning is simulated inside a recording
    var freed = 0
    let recording = try Heapline.record { freed = MemoryPressure.simulate(.urgent) }
    // Then both ran on this thread, and the total is theirs (with any other test's observers)
    #expect(levels.withLock { $0 } == [.urgent])
    #expect(freed >= 1_250)
    // And the recording has the warning, its level and source, and each answer
    let warning = try #require(recording.statistics.memoryWarnings.first)
    #expect(recording.statistics.memoryWarnings.count == 1)
    #expect(warning.warning.level == .urgent)
    #expect(warning.warning.source == .simulated)
    let answers = Dictionary(
      warning.responses.map { ($0.observer, $0.freedBytes) }, uniquingKeysWith: +)
    #expect(answers["MemoryPressureTests.first"] == 1_000)
    #expect(answers["MemoryPressureTests.second"] == 250)
    #expect(recording.statistics.totals.markCount == 1)  // its marker in the timeline
  }

  @Test func aCancelledObserverNoLongerRuns() throws {
    let calls = Mutex(0)
    let observation = MemoryPressure.addObserver(named: "MemoryPressureTests.cancelled") { _ in
      calls.withLock { $0 += 1 }
      return 0
    }
    #expect(observation.isActive)
    _ = try Heapline.record {
      MemoryPressure.simulate(.warning)
      observation.cancel()
      #expect(!observation.isActive)
      MemoryPressure.simulate(.critical)
    }
    #expect(calls.withLock { $0 } == 1)
  }

  @Test func anObservationReleasedStopsItsObserver() throws {
    let calls = Mutex(0)
    var observation: MemoryPressureObservation? = MemoryPressure.addObserver(
      named: "MemoryPressureTests.released"
    ) { _ in
      calls.withLock { $0 += 1 }
      return 0
    }
    _ = observation
    observation = nil
    _ = try Heapline.record { MemoryPressure.simulate(.warning) }
    #expect(calls.withLock { $0 } == 0)
  }

  @Test func levelsPromiseAShareOfALimit() {
    #expect(MemoryPressure.Level.normal.retainedBytes(of: 1_000) == 1_000)
    #expect(MemoryPressure.Level.warning.retainedBytes(of: 1_000) == 500)
    #expect(MemoryPressure.Level.urgent.retainedBytes(of: 1_000) == 250)
    #expect(MemoryPressure.Level.critical.retainedBytes(of: 1_000) == 0)
  }

  @Test func systemPressureIsWatchedWhereTheKernelHasIt() {
    // PSI needs Linux 4.20 and a kernel built with it; without, the error says so cleanly.
    do {
      try MemoryPressure.monitorSystemPressure(stall: .milliseconds(150), window: .seconds(2))
      #expect(MemoryPressure.isSystemPressureAvailable)
      // Off again: a stall on a busy machine must not warn the other tests' caches.
      MemoryPressure.stopMonitoringSystemPressure()
    } catch HeaplineError.io(_, let err) {
      #expect(err == ENOENT || err == EINVAL || err == EPERM || err == EACCES)
    } catch {
      Issue.record("unexpected error \(error)")
    }
  }
}
