import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Leak scans where what the scan needs cannot be had (Fixtures/scanfails.c): the scan finds
/// another way, or the trace says why it holds none.
@Suite struct LeakScanFailureTests {
  @Test func aScanWhoseHelperCannotStartStopsTheThreadsBySignalsAndLeavesErrnoAlone() throws {
    // Given a program where every clone that makes no thread fails with EAGAIN, as under
    // RLIMIT_NPROC: the ptrace helper could not start, and only EPERM sent the scan to signals,
    // so heapline_check_leaks() returned 11 and found nothing; its probes left errno EFAULT
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("scanfails", in: dir)
    let trace = dir.appendingPathComponent("clone.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "clone"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then the scan runs, finds the five dropped blocks, and errno is as the program set it
    #expect(result.stdout == "check=0 errno=0 lost=5/5010\n")
    let report = try LeakReport.read(path: trace, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount(blocks: 5, bytes: 5010))
  }

  @Test(arguments: ["kill", "kill-raw"])
  func aSeccompFilterThatWouldKillTheProgramForTheScansCallsKeepsTheScanFromRunning(
    mode: String
  ) throws {
    // Given a program whose seccomp filter kills it at a clone that makes no process, as the
    // scan's helper is made: the scan at exit killed it (SIGSYS, 159). Installed with prctl,
    // the shim reads the filter; with the system call, it only sees that there is one more
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("scanfails", in: dir)
    let trace = dir.appendingPathComponent("kill.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, mode])
    // Then the program ends as untraced, and the trace says why it holds no scan
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "done\n")
    let reason =
      "could not run: the program installed a seccomp filter that would kill it for a system"
      + " call of the scan (or one the shim could not read)"
    #expect(result.stderr.contains("heapline: leak scan \(reason)"), "\(result.stderr)")
    let leaks = try Harness.heapline(["leaks", trace])
    #expect(leaks.stderr.hasSuffix("the leak scan at exit \(reason)\n"), "\(leaks.stderr)")
  }

  @Test(arguments: ["kill-mincore", "kill-mincore-raw"])
  func aSeccompFilterThatForbidsTheShimsOwnCallsEndsTheRecordingBeforeItTakesEffect(
    mode: String
  ) throws {
    // Given a program whose filter kills it at mincore, which it never calls but libunwind and
    // the shim do, installed with prctl or with the seccomp system call (libseccomp's way): it
    // died of SIGSYS under record
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("scanfails", in: dir)
    let trace = dir.appendingPathComponent("mincore.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, mode])
    // Then it ends as untraced, and the trace ends, whole, where the filter came, saying why
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "done\n")
    #expect(result.stderr.contains("forbids the shim's system calls: recording ended"))
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.endReason == .seccomp)
  }

  @Test func aTraceWhoseScanAtExitCouldNotRunSaysWhy() throws {
    // Given a program that takes every descriptor left before it returns from main: the scan
    // at exit could list no thread, and the trace held no scan without a word; `leaks` told the
    // user to record with --leaks, which they had
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("scanfails", in: dir)
    let trace = dir.appendingPathComponent("fds.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "fds"])
    #expect(result.status == 0, "\(result.stderr)")
    // Then record's output and `leaks` both say that the scan could not run, and why
    let reason = "could not run: the program's threads could not be listed (/proc/self/task)"
    #expect(result.stderr.contains("heapline: leak scan \(reason)"), "\(result.stderr)")
    let leaks = try Harness.heapline(["leaks", trace])
    #expect(leaks.status == 2)
    #expect(
      leaks.stderr
        == "heapline: trace '\(trace)' holds no leak scan: the leak scan at exit \(reason)\n")
    let page = try Harness.heapline(["view", trace, "-o", "-"])
    #expect(page.status == 0, "\(page.stderr)")
    #expect(
      page.stdout.contains("\"leak_scan_failure\":\"the program's threads could not be listed"))
  }
}
