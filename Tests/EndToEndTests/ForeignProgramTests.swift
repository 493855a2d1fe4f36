import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Programs that are not ours: Debian's python3 and sqlite3, and the bundled Swift demo.
@Suite struct ForeignProgramTests {
  @Test func python3OutputAndStatusPassThroughAndItsBigBlocksAreCounted() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("python.trace")
    // Given a Python program that holds 5 bytearrays of 3,000,000 bytes (CPython asks malloc
    // for size + 1 bytes, and for its 56-byte object header apart), freed when it exits
    let script = """
      kept = [bytearray(3_000_000) for _ in range(5)]
      print("hello from python", len(kept))
      raise SystemExit(3)
      """
    let result = try Harness.heapline(["record", "-o", trace.path, "--", "python3", "-c", script])
    #expect(result.status == 3)
    #expect(result.stdout == "hello from python 5\n")
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let big = try #require(stats.category(named: "Malloc 3.00 MiB"))
    #expect(big.totalCount == 5)
    #expect(big.totalBytes == 5 * 3_000_001)
    #expect(big.bytesAtPeak == 5 * 3_000_001)
    // The categories account for every live byte
    #expect(stats.categories.reduce(0) { $0 + $1.persistentBytes } == stats.totals.liveBytes)
  }

  /// Debian's python3 is a non-PIE executable: asked where `malloc` is, the loader names its
  /// PLT entry, not the shim, though calls do reach the shim. It must be traced all the same.
  @Test func debiansNonPIEPython3IsTraced() throws {
    let python = "/usr/bin/python3"
    guard FileManager.default.isExecutableFile(atPath: python) else { return }
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("debian-python.trace")
    let script = "kept = [bytearray(3_000_000) for _ in range(5)]"
    let result = try Harness.heapline([
      "record", "--no-leaks", "-o", trace.path, "--", python, "-c", script,
    ])
    #expect(result.status == 0)
    #expect(!result.stderr.contains("did not load the preload library"))
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let big = try #require(stats.category(named: "Malloc 3.00 MiB"))
    #expect(big.totalCount == 5)
    #expect(big.totalBytes == 5 * 3_000_001)
  }

  @Test func aProgramWithAMallocOfItsOwnIsSaidToHaveOneAndLeavesNoEmptyTrace() throws {
    // Given a program that defines malloc, free, calloc and realloc itself
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("ownmalloc", in: dir)
    let trace = dir.appendingPathComponent("own.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    // Then it runs as it does untraced, and heapline says why there is no trace (before, it
    // guessed at a static or setuid program, and left an empty file that no command could read)
    #expect(result.status == 0)
    #expect(result.stdout == "done\n")
    #expect(result.stderr.contains("'\(program)' has a malloc of its own"), "\(result.stderr)")
    #expect(!result.stderr.contains("did not load the preload library"))
    #expect(!FileManager.default.fileExists(atPath: trace))
  }

  @Test func aStaticProgramIsSaidNotToLoadThePreloadLibraryAndLeavesNoEmptyTrace() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("ownmalloc", in: dir, flags: ["-static"])
    let trace = dir.appendingPathComponent("static.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program])
    #expect(result.status == 0)
    #expect(result.stdout == "done\n")
    #expect(
      result.stderr.contains("'\(program)' did not load the preload library"), "\(result.stderr)")
    #expect(!FileManager.default.fileExists(atPath: trace))
  }

  @Test func aStaticProgramThatTheTracedProgramExecsIsSaidNotToLoadThePreloadLibrary() throws {
    // Given a shell that becomes a static program with exec
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("ownmalloc", in: dir, flags: ["-static"])
    let trace = dir.appendingPathComponent("exec-static.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", "/bin/sh", "-c", "exec \"$0\"", program])
    // Then the static program runs as it does untraced, the shell's trace is kept beside the
    // path, and heapline says why there is none at the path (before, it said that the program
    // had moved or removed its trace)
    #expect(result.status == 0)
    #expect(result.stdout == "done\n")
    #expect(
      result.stderr.contains(
        "the program that '/bin/sh' became with exec did not load the preload library"),
      "\(result.stderr)")
    #expect(!result.stderr.contains("no longer there"))
    #expect(!FileManager.default.fileExists(atPath: trace))
    let shell = try TraceReader(path: trace + ".1")
    #expect(shell.trailer?.endReason == .exec)
  }

  @Test(arguments: [false, true])
  func aStaticProgramThatTheTracedProgramExecsSeesTheEnvironmentItWouldUntraced(script: Bool)
    throws
  {
    // Given a shell that becomes a static program with exec, directly or as the interpreter of
    // a script, and a variable of the user's own: the static program, which loads no preload
    // library to scrub them, saw LD_PRELOAD and every one of the shim's settings
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    var program = try Harness.fixture("showenv", in: dir, flags: ["-static"])
    if script {
      let path = dir.appendingPathComponent("script").path
      try "#!\(program)\n".write(toFile: path, atomically: true, encoding: .utf8)
      try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: path)
      program = path
    }
    let trace = dir.appendingPathComponent("exec-static.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", "/bin/sh", "-c", "exec \"$0\"", program],
      environment: ["HEAPLINE_MINE": "kept"])
    // Then it sees what it would untraced: no preload, and only the user's variable
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "LD_PRELOAD=(unset) HEAPLINE_MINE=kept\n")
  }

  @Test(arguments: ["set-user-ID script", "file capabilities"])
  func aProgramTheLoaderRunsAsUsualIsFollowedWhateverItsModeSays(kind: String) throws {
    // Given a shell that execs a set-user-ID script owned by another user (Linux ignores a
    // script's set-ID bits), or, as root, a program with file capabilities (root's do not grow,
    // so the loader keeps the preload): both were taken for programs run in secure mode, and
    // went untraced
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let showenv = try Harness.fixture("showenv", in: dir)
    var target = showenv
    if kind == "set-user-ID script" {
      target = dir.appendingPathComponent("script").path
      try "#!\(showenv)\n".write(toFile: target, atomically: true, encoding: .utf8)
      // The owner first: a change of owner clears the set-user-ID bit
      try FileManager.default.setAttributes([.ownerAccountID: 65534], ofItemAtPath: target)
      try FileManager.default.setAttributes([.posixPermissions: 0o4755], ofItemAtPath: target)
      let mode = try FileManager.default.attributesOfItem(atPath: target)[.posixPermissions]
      try #require((mode as? Int).map { $0 & 0o4000 != 0 } == true, "no set-user-ID bit")
    } else {
      guard getuid() == 0, FileManager.default.isExecutableFile(atPath: "/usr/sbin/setcap") else {
        return
      }
      let cap = try Harness.run("/usr/sbin/setcap", ["cap_net_raw+ep", showenv])
      try #require(cap.status == 0, "setcap: \(cap.stderr)")
    }
    let trace = dir.appendingPathComponent("followed.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", "/bin/sh", "-c", "exec \"$0\"", target])
    // Then the program is traced, and sees the environment it would untraced
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "LD_PRELOAD=(unset)\n")
    #expect(result.stderr.contains("the program ran exec 1 time(s)"), "\(result.stderr)")
    #expect(try TraceReader(path: trace).trailer?.endReason == .exited)
  }

  @Test func anExecOfAFIFOFailsAsUntracedWithoutWaitingForAWriter() throws {
    // Given a shell that execs a FIFO: reading the file to learn whether its program loads the
    // shim must not wait, as a plain open does, for a writer that never comes
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let fifo = dir.appendingPathComponent("fifo").path
    #expect(mkfifo(fifo, 0o755) == 0)
    let trace = dir.appendingPathComponent("fifo.trace").path
    let result = try Harness.heapline(
      ["record", "-o", trace, "--", "/bin/sh", "-c", "exec \"$0\"", fifo], timeout: 60)
    // Then the exec fails as it does untraced (sh: Permission denied, 126)
    #expect(result.status == 126, "\(result.stderr)")
  }

  @Test func sqlite3OutputPassesThroughUnchanged() throws {
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("sqlite.trace")
    let sql = "create table t(x); insert into t values (1),(2),(3); select sum(x) from t;"
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--", "sqlite3", ":memory:", sql])
    #expect(result.status == 0)
    #expect(result.stdout == "6\n")
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.isComplete)
    #expect(stats.totals.allocationCount == stats.categories.reduce(0) { $0 + $1.totalCount })
  }

  @Test func swiftObjectsOfARecordedProgramAreCountedByClass() throws {
    // Given the demo, which keeps 20,000 LogRecord objects (16-byte header + two Strings)
    let dir = try Harness.temporaryDirectory()
    let trace = dir.appendingPathComponent("demo.trace")
    let demo = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("heapline-demo").path
    let result = try Harness.heapline(["record", "-o", trace.path, "--", demo])
    #expect(result.status == 0)
    #expect(result.stdout.contains("INFO: 5000 records"))
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    let records = try #require(stats.category(named: "heapline_demo.LogRecord"))
    #expect(records.persistentCount == 20_000)
    #expect(records.persistentBytes == 20_000 * 48)
    #expect(records.transientCount == 0)
    let index = try #require(stats.category(named: "heapline_demo.LogIndex"))
    #expect(index.persistentCount == 1)
  }

  @Test func thePreloadLibraryDoesNotLoadTheSwiftRuntime() throws {
    let preload = URL(fileURLWithPath: Harness.heapline).deletingLastPathComponent()
      .appendingPathComponent("libheapline-preload.so").path
    let ldd = try Harness.run("/usr/bin/ldd", [preload])
    #expect(ldd.status == 0)
    #expect(ldd.stdout.contains("libunwind"))
    #expect(!ldd.stdout.contains("libswiftCore"))
    #expect(!ldd.stdout.contains("libstdc++"))
  }

  @Test(arguments: [false, true])
  func aProgramWithAnotherAllocatorRunsWithItUntracedAndRecordSaysSo(preloaded: Bool) throws {
    // Given an allocator in a shared library that also defines glibc's __libc_ entry points, as
    // tcmalloc and mimalloc do, and aborts on a block not its own: linked in, or preloaded
    let dir = try Harness.temporaryDirectory()
    let (program, library) = try Harness.fixture("toyuser", linking: "toyalloc", in: dir)
    let environment = preloaded ? ["LD_PRELOAD": library] : [:]
    let untraced = try Harness.run(program, [], environment: environment)
    #expect(untraced.stdout == "served 1003, usable 100000\n")
    // Then under record the program allocates with it as untraced (the shim served it from
    // glibc's heap, and crashed the program), and record says why there is no trace
    let trace = dir.appendingPathComponent("toy.trace").path
    let traced = try Harness.heapline(
      ["record", "-o", trace, "--", program], environment: environment)
    #expect(traced.status == 0)
    #expect(traced.stdout == untraced.stdout)
    #expect(
      traced.stderr
        == "heapline: warning: '\(program)' allocates with libtoyalloc.so, not glibc's malloc, "
        + "which the preload library does not trace (it ran with its allocator, untraced): no "
        + "trace was written\n")
    #expect(!FileManager.default.fileExists(atPath: trace))
  }

  @Test func anAllocatorWithoutTheAlignedCallsIsStillTheProgramsAndTheRestGoToGlibc() throws {
    // Given an allocator that defines malloc, free, calloc, realloc and malloc_usable_size only:
    // the shim took glibc for the program's allocator, and served its calls from glibc's heap
    let dir = try Harness.temporaryDirectory()
    let (program, _) = try Harness.fixture(
      "toyuser", linking: "toyalloc", in: dir, libraryFlags: ["-DTOY_PARTIAL"])
    let untraced = try Harness.run(program, ["unaligned"])
    #expect(untraced.stdout == "served 1002, usable 100000\n")
    // Then the program allocates with it as untraced, and record says so
    let trace = dir.appendingPathComponent("toy.trace").path
    let traced = try Harness.heapline(["record", "-o", trace, "--", program, "unaligned"])
    #expect(traced.status == 0)
    #expect(traced.stdout == untraced.stdout)
    #expect(traced.stderr.contains("allocates with libtoyalloc.so, not glibc's malloc"))
  }
}
