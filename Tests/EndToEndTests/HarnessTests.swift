import Foundation
import Testing

/// The harness gives every child a deadline: a hang fails its test with the child's stacks
/// instead of hanging the suite.
@Suite struct HarnessTests {
  @Test func aChildPastItsDeadlineIsKilledWithItsGroupAndReportedWithItsStacks() throws {
    // Given a child that sleeps for 300 s, and has started another sleeper in its group
    let dir = try Harness.temporaryDirectory()
    let pidFile = dir.appendingPathComponent("background.pid").path
    let script = "sleep 300 & echo $! > \(pidFile); exec sleep 300"
    // When it runs with a deadline of 2 s
    var failure: HarnessError?
    do {
      _ = try Harness.run("/bin/sh", ["-c", script], timeout: 2)
    } catch let error as HarnessError {
      failure = error
    }
    // Then the run fails, naming the deadline and showing where the child's thread was
    let message = try #require(failure).description
    #expect(message.contains("timed out after 2.0 s and was killed with its process group"))
    if FileManager.default.isExecutableFile(atPath: "/usr/bin/gdb") {
      #expect(message.contains("nanosleep"), "\(message)")
    }
    // Both sleepers' stacks were taken, and the one it started is gone too (a zombie at most,
    // until init reaps it)
    let text = try String(contentsOfFile: pidFile, encoding: .utf8)
    let background = try #require(pid_t(text.trimmingCharacters(in: .whitespacesAndNewlines)))
    #expect(message.contains("── process \(background) (sleep) ──"), "\(message)")
    #expect(Harness.hasEnded(background), "state \(Harness.processState(background) ?? "gone")")
  }

  @Test func aChildEndedBySignalNReportsStatus128PlusN() throws {
    let result = try Harness.run("/bin/sh", ["-c", "kill -TERM $$"], timeout: 60)
    #expect(result.status == 128 + SIGTERM)
  }

  @Test func stdinReachesTheChildAndBothOutputsComeBack() throws {
    let result = try Harness.run(
      "/bin/sh", ["-c", "read line; echo \"out $line\"; echo err >&2; exit 3"], stdin: "hi\n")
    #expect(result.status == 3)
    #expect(result.stdout == "out hi\n")
    #expect(result.stderr == "err\n")
  }

  @Test func aChildInheritsOnlyStdinStdoutAndStderr() throws {
    // Given a descriptor numbered 40 or more that this process leaves inheritable
    let file = open("/dev/null", O_RDONLY)
    let stray = fcntl(file, F_DUPFD, 40)
    close(file)
    try #require(stray >= 40)
    defer { close(stray) }
    // Then the child's descriptors are 0, 1, 2 and the one its shell reads /proc/PID/fd with
    let result = try Harness.run(
      "/bin/sh", ["-c", "for f in /proc/$$/fd/*; do echo ${f##*/}; done"])
    #expect(result.stdout.split(separator: "\n").sorted() == ["0", "1", "2", "3"])
  }
}
