import Foundation
import Testing

/// Files are sacred: an output is never the input or the program, a trace never replaces a file
/// that is not a trace, and an output that fails leaves the old file as it was.
@Suite struct OutputSafetyTests {
  /// A directory with the blocks program and a trace of `blocks` blocks of 48 bytes.
  func recorded(blocks: Int = 10, symbols: Bool = true) throws -> (
    dir: URL, program: String, trace: String
  ) {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("blocks", in: dir)
    let trace = dir.appendingPathComponent("blocks.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace] + (symbols ? [] : ["--no-symbols"])
        + ["--", program, String(blocks), "48", "0", "0"])
    #expect(result.status == 0)
    return (dir, program, trace)
  }

  /// `heapline` run from `dir`, for relative paths (the test process's own directory is
  /// shared by the tests that run in parallel).
  func heapline(in dir: URL, _ arguments: [String]) throws -> Harness.Result {
    try Harness.run(
      "/bin/sh",
      ["-c", "cd \"$1\" && shift && exec \"$@\"", "sh", dir.path, Harness.heapline]
        + arguments)
  }

  func contents(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
  }

  func names(in dir: URL) throws -> [String] {
    try FileManager.default.contentsOfDirectory(atPath: dir.path).sorted()
  }

  func expectRefusal(_ result: Harness.Result, status: Int32, mentioning text: String) {
    #expect(result.status == status)
    #expect(result.stderr.split(separator: "\n").count == 1, "stderr: \(result.stderr)")
    #expect(result.stderr.contains(text), "stderr: \(result.stderr)")
  }

  @Test func recordRefusesToWriteTheTraceOverTheProgramOrAHardLinkToIt() throws {
    let (dir, program, _) = try recorded()
    let before = try contents(program)
    let link = dir.appendingPathComponent("link").path
    try FileManager.default.linkItem(atPath: program, toPath: link)
    // Given the program's own path, spelled another way, and a hard link to it
    for output in ["./blocks", program, link] {
      let result = try heapline(
        in: dir, ["record", "-o", output, "--", program, "1", "8", "0", "0"])
      expectRefusal(result, status: 125, mentioning: "refusing to write the trace over")
      // The program never ran, and its bytes are unchanged
      #expect(result.stdout.isEmpty)
      #expect(try contents(program) == before)
    }
  }

  @Test func standardOutputThatIsTheInputTraceIsRefusedAndTheTraceKept() throws {
    // Given a trace, and a shell that points a command's standard output at it: `objects`
    // appended a gigabyte of rows to it, and `report` wrote over its header
    let (_, _, trace) = try recorded()
    let before = try contents(trace)
    for command in [
      "objects '\(trace)' >> '\(trace)'", "report '\(trace)' 1<> '\(trace)'",
      "report '\(trace)' --format json >> '\(trace)'", "leaks '\(trace)' >> '\(trace)'",
    ] {
      let result = try Harness.run("/bin/sh", ["-c", "'\(Harness.heapline)' " + command])
      // Then each is refused in one line, and the trace is as it was
      expectRefusal(
        result, status: 2, mentioning: "cannot write 'standard output': it is the input")
      #expect(try contents(trace) == before, "\(command)")
    }
  }

  @Test func recordRefusesAFileThatIsNotATraceUnlessForced() throws {
    let (dir, program, _) = try recorded()
    let notes = dir.appendingPathComponent("notes.txt").path
    let text = Data("my notes, not a trace\n".utf8)
    try text.write(to: URL(fileURLWithPath: notes))
    let refused = try Harness.heapline(["record", "-o", notes, "--", program, "1", "8", "0", "0"])
    expectRefusal(refused, status: 125, mentioning: "is not a Heapline trace")
    #expect(try contents(notes) == text)
    // A file that only starts as a trace does, without a trace header's checksum, is refused
    // too: the magic alone let record replace it
    let lookalike = dir.appendingPathComponent("lookalike.trace").path
    let fake = Data("HEAPLINE garbage that is not a trace\n".utf8)
    try fake.write(to: URL(fileURLWithPath: lookalike))
    let refusedToo = try Harness.heapline(
      ["record", "-o", lookalike, "--", program, "1", "8", "0", "0"])
    expectRefusal(refusedToo, status: 125, mentioning: "is not a Heapline trace")
    #expect(try contents(lookalike) == fake)
    // With --force it is replaced by a trace, and the notice says what was replaced
    let forced = try Harness.heapline(
      ["record", "--force", "-o", notes, "--", program, "1", "8", "0", "0"])
    #expect(forced.status == 0)
    #expect(
      forced.stderr.contains(
        "trace written to \(notes) (it replaced a file that was not a trace (--force))"))
    #expect(try contents(notes).prefix(8) == Data("HEAPLINE".utf8))
  }

  @Test func recordOverAnExistingTraceSaysItReplacedIt() throws {
    let (_, program, trace) = try recorded()
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "1", "8", "0", "0"])
    #expect(result.status == 0)
    #expect(
      result.stderr == "heapline: trace written to \(trace) (it replaced the previous trace)\n")
  }

  @Test func recordRefusesAnOutputThatIsNotARegularFile() throws {
    let (dir, program, _) = try recorded()
    let full = try Harness.heapline([
      "record", "-o", "/dev/full", "--", program, "1", "8", "0", "0",
    ])
    expectRefusal(full, status: 125, mentioning: "'/dev/full': it is not a regular file")
    let directory = try Harness.heapline(["record", "-o", dir.path, "--", program])
    expectRefusal(directory, status: 125, mentioning: "it is a directory")
    #expect(full.stdout.isEmpty && directory.stdout.isEmpty)
  }

  @Test func recordRefusesTheFileThatIsTheProgramsStandardOutput() throws {
    // Given `-o /dev/stdout` with the output going to a file, which the program writes too
    let (dir, program, _) = try recorded()
    let output = dir.appendingPathComponent("out.txt").path
    let result = try Harness.run(
      "/bin/sh",
      [
        "-c", "exec \"$0\" record -o /dev/stdout -- \"$1\" 1 8 0 0 > \"$2\"", Harness.heapline,
        program, output,
      ])
    expectRefusal(
      result, status: 125,
      mentioning: "'/dev/stdout': it is the standard output that the program is given")
    #expect(try contents(output).isEmpty)
  }

  @Test func aDanglingSymbolicLinkIsSaidToBeOne() throws {
    let (dir, program, _) = try recorded()
    let link = dir.appendingPathComponent("link.trace").path
    try FileManager.default.createSymbolicLink(
      atPath: link, withDestinationPath: dir.appendingPathComponent("nowhere.trace").path)
    let result = try Harness.heapline(["record", "-o", link, "--", program, "1", "8", "0", "0"])
    // It said "File exists", of a file that does not
    expectRefusal(
      result, status: 125, mentioning: "it is a symbolic link to a file that does not exist")
  }

  @Test func aTraceReplacedDuringTheRunIsNeitherAppendedToNorSaidWritten() throws {
    // Given a program that puts another file at its trace's path, as a second recording to the
    // same path does when it stores its symbols
    let (dir, _, trace) = try recorded()
    let other = dir.appendingPathComponent("other").path
    let result = try Harness.heapline([
      "record", "-o", trace, "--", "/bin/sh", "-c", "echo other > \"$0\"; mv \"$0\" \"$1\"", other,
      trace,
    ])
    // Then record says that this run's trace is lost, and leaves that file alone
    expectRefusal(
      result, status: 125,
      mentioning: "'\(trace)' was replaced during the run by another file (another recording")
    #expect(try contents(trace) == Data("other\n".utf8))
  }

  /// With SIGXFSZ ignored (a write past the limit fails with EFBIG, as a full disk fails with
  /// ENOSPC) and left as it was.
  @Test(arguments: ["trap '' XFSZ; ", ""])
  func recordWithNoRoomForTheTraceFailsBeforeTheProgramRuns(ignoring: String) throws {
    // Given a file size limit of 0 and a program that would leave a mark
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("a.trace").path
    let mark = dir.appendingPathComponent("ran").path
    let script = ignoring + "ulimit -f 0; exec \"$0\" \"$@\""
    let result = try Harness.run(
      "/bin/sh",
      [
        "-c", script, Harness.heapline, "record", "-o", trace, "--", "/bin/sh", "-c",
        "touch '\(mark)'",
      ])
    // Then record fails in one line, before the program runs, and leaves no empty trace
    expectRefusal(
      result, status: 125, mentioning: "cannot write trace to '\(trace)': File too large")
    #expect(try names(in: dir).isEmpty)
  }

  @Test func reportsThatCannotBeWrittenFailWithTheReason() throws {
    // Given a trace with a leak scan, and standard output on a full device
    let (_, _, trace) = try recorded()
    for command in [["report", trace], ["leaks", trace], ["report", trace, "--format", "json"]] {
      let result = try Harness.run(
        "/bin/sh", ["-c", "exec \"$0\" \"$@\" > /dev/full", Harness.heapline] + command)
      // Then each says so in one line and fails, where the text reports used to exit 0
      expectRefusal(
        result, status: 2, mentioning: "cannot write 'standard output': No space left on device")
    }
  }

  @Test func recordToStandardOutputIsAUsageErrorAndMakesNoFile() throws {
    let (dir, program, _) = try recorded()
    let before = try names(in: dir)
    let result = try heapline(in: dir, ["record", "-o", "-", "--", program, "1", "8", "0", "0"])
    #expect(result.status == 64)
    #expect(result.stderr.hasPrefix("heapline: a trace is binary and cannot go to standard output"))
    #expect(try names(in: dir) == before)
  }

  @Test func analysisCommandsRefuseToWriteOverTheirInput() throws {
    let (dir, _, trace) = try recorded()
    let before = try contents(trace)
    let link = dir.appendingPathComponent("link.trace").path
    try FileManager.default.linkItem(atPath: trace, toPath: link)
    let commands: [[String]] = [
      ["timeline", trace, "-o", trace],
      ["objects", trace, "-o", link],
      ["export", trace, "--format", "folded", "-o", trace],
      ["diff", trace, "--from", "start", "--to", "end", "-o", link],
      ["diff", trace, link, "-o", trace],
    ]
    for arguments in commands {
      let result = try Harness.heapline(arguments)
      expectRefusal(result, status: 2, mentioning: "it is the input")
      #expect(try contents(trace) == before, "\(arguments)")
    }
    #expect(try names(in: dir) == ["blocks", "blocks.trace", "link.trace"])
  }

  @Test func aDashWritesTextToStandardOutput() throws {
    let (dir, _, trace) = try recorded()
    let toFile = dir.appendingPathComponent("objects.csv").path
    #expect(try Harness.heapline(["objects", trace, "--no-symbolize", "-o", toFile]).status == 0)
    let toStdout = try heapline(in: dir, ["objects", trace, "--no-symbolize", "-o", "-"])
    #expect(toStdout.status == 0)
    #expect(Data(toStdout.stdout.utf8) == (try contents(toFile)))
    #expect(!FileManager.default.fileExists(atPath: dir.appendingPathComponent("-").path))
  }

  /// Whether the shell left SIGXFSZ ignored (the write fails with EFBIG, as one on a full disk
  /// fails with ENOSPC) or as it was: its default action ended the command with no word.
  @Test(arguments: ["trap '' XFSZ; ", ""])
  func aFailedWriteLeavesTheOldOutputAndNoTemporaryFile(ignoring: String) throws {
    // Given an existing output and a file size limit of 512 bytes
    let (dir, _, trace) = try recorded(blocks: 200)
    let output = dir.appendingPathComponent("objects.csv").path
    let old = Data("the old output\n".utf8)
    try old.write(to: URL(fileURLWithPath: output))
    let script = ignoring + "ulimit -f 1; exec \"$0\" \"$@\""
    let result = try Harness.run(
      "/bin/sh", ["-c", script, Harness.heapline, "objects", trace, "--no-symbolize", "-o", output])
    // Then heapline says why, and the old output and the directory are as they were
    expectRefusal(result, status: 2, mentioning: "File too large")
    #expect(try contents(output) == old)
    #expect(try names(in: dir) == ["blocks", "blocks.trace", "objects.csv"])
  }

  @Test func aKilledCommandLeavesNoTemporaryFile() throws {
    // Given an objects command held while its output is open: its symbolizer says so and sleeps
    // (the trace holds no symbols, so the symbolizer runs)
    let (dir, _, trace) = try recorded(symbols: false)
    let work = try Harness.temporaryDirectory()
    let held = work.appendingPathComponent("held").path
    let symbolizer = work.appendingPathComponent("symbolizer").path
    try Data("#!/bin/sh\necho $$ > \(held).pid && mv \(held).pid \(held)\nexec sleep 300\n".utf8)
      .write(to: URL(fileURLWithPath: symbolizer))
    try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: symbolizer)
    let before = try names(in: dir)
    let output = dir.appendingPathComponent("objects.csv").path
    var environment = ProcessInfo.processInfo.environment
    environment["HEAPLINE_SYMBOLIZER"] = symbolizer
    let child = try SpawnedChild(
      executable: Harness.heapline, arguments: ["objects", trace, "-o", output],
      environment: environment)
    defer { child.killGroup() }
    let collected = child.collect(stdin: Data())
    let deadline = Date(timeIntervalSinceNow: Harness.defaultTimeout)
    while !FileManager.default.fileExists(atPath: held) && Date() < deadline {
      try #require(child.wait(seconds: 0.01) == nil, "heapline ended before its symbolizer ran")
    }
    let sleeper = try #require(
      pid_t(try String(contentsOfFile: held, encoding: .utf8).trimmingCharacters(in: .newlines)))
    defer { kill(sleeper, SIGKILL) }
    // When it is killed
    kill(child.pid, SIGKILL)
    #expect(child.wait(seconds: Harness.defaultTimeout) == 128 + SIGKILL)
    _ = collected.wait(until: Date(timeIntervalSinceNow: 1))
    // Then the directory holds what it held: no output, no temporary file
    #expect(try names(in: dir) == before)
  }
}
