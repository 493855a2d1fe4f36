import CHeapline
import Foundation
import Heapline
import Testing

final class ProbeDone: @unchecked Sendable { let done = DispatchSemaphore(value: 0); var n: UInt64 = 0 }

@Suite(.serialized) struct ClearProbe {
  @Test func clearOnThreadInRecording() throws {
    let probe = ProbeDone()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        heapline_clear_stack()
        probe.done.signal()
      }
      thread.start()
      probe.done.wait()
    }
    #expect(recording.isComplete)
  }
  @Test func scanOnThreadInRecording() throws {
    let probe = ProbeDone()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        var summary = heapline_leak_summary()
        _ = heapline_check_leaks(&summary)
        probe.n = summary.lost_blocks
        probe.done.signal()
      }
      thread.start()
      probe.done.wait()
    }
    #expect(recording.isComplete)
    #expect(probe.n > 0)
  }
  @Test func bothOnThreadInRecording() throws {
    let probe = ProbeDone()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        heapline_clear_stack()
        var summary = heapline_leak_summary()
        _ = heapline_check_leaks(&summary)
        probe.n = summary.lost_blocks
        probe.done.signal()
      }
      thread.start()
      probe.done.wait()
    }
    #expect(recording.isComplete)
    #expect(probe.n == 40)
  }
}

extension ClearProbe {
  @Test func viaSwiftAPI() throws {
    let result = LeakCheckResult()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        result.check = try? Heapline.checkLeaks()
        result.done.signal()
      }
      thread.start()
      result.done.wait()
    }
    #expect(result.check?.lostBlocks == 40)
    #expect(recording.isComplete)
  }
  @Test func viaSwiftAPIThenLeaks() throws {
    let result = LeakCheckResult()
    let recording = try Heapline.record {
      let thread = Thread {
        leakTenControllers()
        result.check = try? Heapline.checkLeaks()
        result.done.signal()
      }
      thread.start()
      result.done.wait()
    }
    let report = try recording.leaks()
    #expect(report.groups.count == 1)
  }
}
