import Foundation
import Testing

/// `Heapline.record { }` when things go wrong (Tests/RecordAPIFixture, in a process of its own):
/// a body that throws, and a disk that fills up. Neither leaves its temporary trace behind, and
/// a failed write is called what it is.
@Suite struct RecordAPIFailureTests {
  static var fixture: String {
    URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("heapline-record-fixture").path
  }

  @Test func aThrowingBodyRethrowsAndRemovesItsTemporaryTrace() throws {
    let dir = try Harness.temporaryDirectory()
    let result = try Harness.run(Self.fixture, ["throwing"], environment: ["TMPDIR": dir.path])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    #expect(result.stdout == "throwing: threw the body failed\n")
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
  }

  @Test func aRecordingThatWaitsForItsTurnForLongSaysWhy() throws {
    // Given a recording started from a thread that the running recording's body waits for,
    // which never gets its turn (it hung without a word)
    let dir = try Harness.temporaryDirectory()
    let result = try Harness.run(Self.fixture, ["nested"], environment: ["TMPDIR": dir.path])
    // Then after 10 s stderr says why, in one line
    #expect(result.stdout == "nested: the inner recording is still waiting\n")
    #expect(
      result.stderr
        == "heapline: Heapline.record has waited 10 s for the recording that another thread "
        + "runs: recordings take turns, so one started from a thread that a recording's body "
        + "waits for never starts\n")
  }

  @Test func aFullDiskIsAFailedWriteAndRemovesItsTemporaryTrace() throws {
    let dir = try Harness.temporaryDirectory()
    let result = try Harness.run(Self.fixture, ["fulldisk"], environment: ["TMPDIR": dir.path])
    #expect(result.status == 0, "stderr: \(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    let line = lines.first ?? ""
    #expect(line.hasPrefix("fulldisk: failed: writing the trace to '\(dir.path)/heapline-"))
    #expect(line.hasSuffix(".trace' failed, so the recording stopped early: File too large"))
    // And the shim is ready for the next recording in the same process
    #expect(lines.dropFirst().first == "then: recorded 100")
    // The shim names the errno of the write that failed: the file size limit's
    #expect(result.stderr.contains("trace write failed, recording stopped: File too large"))
    #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == [])
  }
}
