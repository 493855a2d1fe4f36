import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// The shim runs inside other people's processes: constructors that allocate before main, signal
/// handlers that malloc, short-lived threads, dlopen, exit with threads still allocating, and a
/// disk that fills up.
@Suite struct ShimSurvivalTests {
  @Test func aHostileProgramRunsUnharmedAndItsScopesAreExact() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("hostile", in: dir)
    let trace = dir.appendingPathComponent("hostile.trace")
    let result = try Harness.heapline(["record", "-o", trace.path, "--", program])
    #expect(result.status == 0)
    let lines = result.stdout.split(separator: "\n")
    #expect(lines.first == "survived: api found, sqlite open")
    // "handler made M kept K": the handler's own count of its mallocs, the ground truth
    let counts = try #require(lines.last?.split(separator: " ").compactMap { Int($0) })
    try #require(counts.count == 2)
    let (made, kept) = (counts[0], counts[1])
    try #require(made >= 1000, "the timer must have fired while the shim was busy")
    let reader = try TraceReader(path: trace.path)
    #expect(reader.trailer?.lostEvents == 0)
    let stats = try Statistics(reader: reader)
    #expect(stats.trace.isComplete)
    // A constructor's allocations, made before main, through the C scope API
    let early = try #require(stats.category(named: "early"))
    #expect(early.persistentCount == 7)
    #expect(early.persistentBytes == 7 * 111)
    // Every malloc and free the handler made, though most came while the shim held the thread's
    // buffer: none dropped
    let signals = try #require(stats.category(named: "signals"))
    #expect(signals.totalCount == made)
    #expect(signals.persistentCount == kept)
    #expect(signals.persistentBytes == UInt64(64 * kept))
    // 200 threads that came and went, 10 blocks each
    let threads = try #require(stats.category(named: "threads"))
    #expect(threads.persistentCount == 2_000)
    #expect(threads.transientCount == 0)
    // The dlopened library is in the module map, so its frames are named
    #expect(stats.modules.contains { $0.path.hasSuffix("libsqlite3.so.0") })
    let report = try Harness.heapline(["report", trace.path, "--top", "50"])
    #expect(report.stdout.contains("sqlite3BtreeOpen  (libsqlite3.so.0)"))
  }

  @Test func aSignalHandlerCallingTheAPIWhileItsThreadIsInMallocNeitherHangsNorLosesSilently()
    throws
  {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("sigapi", in: dir)
    let trace = dir.appendingPathComponent("sigapi.trace")
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", program], timeout: 120)
    #expect(result.status == 0, "\(result.stderr)")
    let hits = try #require(
      Int(result.stdout.split(separator: " ").last?.trimmingCharacters(in: .newlines) ?? ""))
    // Each call the handler made is in the trace, or was refused (its thread held its buffer)
    // and counted: none is lost unseen
    let reader = try TraceReader(path: trace.path)
    var stream = reader.events()
    var marks = 0
    var reported = 0
    var released = 0
    while let event = try stream.next() {
      switch event {
      case .mark(let mark) where mark.name == "sig": marks += 1
      case .backingStore(let store):
        if store.kind == .allocated { reported += 1 } else { released += 1 }
      default: break
      }
    }
    let refused = Int(stream.metadata.lostEvents[.insideShim] ?? 0)
    #expect(marks + reported + released + refused == hits + hits + hits / 2)
  }

  @Test func aHandlerThatAllocatesOnAnEightKilobyteAlternateStackRunsAndIsRecorded() throws {
    // Given a handler on an 8 KiB alternate stack from malloc that makes a block of 1,111
    // bytes, 3 of 777 zeroed, grows those to 4,444 and frees the first, five times
    // (Fixtures/altstack.c). The kernel's signal frame takes about 3 KiB of it; the previous
    // shim took 11 KiB more (its stack arrays, libunwind's walk through the signal frame, and
    // the dynamic linker binding the shim's own calls on first use) and the program crashed
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("altstack", in: dir)
    let trace = dir.appendingPathComponent("altstack.trace")
    let result = try Harness.heapline([
      "record", "--no-leaks", "-o", trace.path, "--", program, "5",
    ])
    // Then it runs to its end
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "handled 5\n")
    // And each of the handler's blocks is in the trace, freed
    var made: [UInt64: Int] = [:]
    var live: Set<AllocID> = []
    var events = try TraceReader(path: trace.path).events()
    while let event = try events.next() {
      switch event {
      case .alloc(let block) where [1111, 2331, 4444].contains(block.size):
        made[block.size, default: 0] += 1
        live.insert(block.id)
      case .free(let free): live.remove(free.id)
      default: break
      }
    }
    #expect(made == [1111: 5, 2331: 5, 4444: 5])
    #expect(live.isEmpty)
    // With its stack: the handler, called through the signal frame from raise in main
    let report = try Harness.heapline(["report", trace.path, "--top", "50"])
    #expect(report.status == 0)
    let lines = report.stdout.split(separator: "\n")
    for (frame, line) in [("#0 handler", 16), ("#0 handler", 17), ("#0 handler", 18), ("main", 31)]
    {
      #expect(
        lines.contains {
          $0.contains("\(frame)  ") && $0.hasSuffix("altstack.c:\(line)  (altstack)")
        },
        "no \(frame) at line \(line)")
    }
  }

  @Test func aHandlerThatFreesMoreThanItsQueueHoldsLosesNoFreeAndTheProgramEnds() throws {
    // Given a timer's handler that frees 100 blocks of 256 KiB at a time, 2,000 in all, while
    // its thread allocates and frees without pause (Fixtures/handlerfrees.c): the calls of a
    // handler that lands inside the shim wait for the event it interrupted, in a queue of 64.
    // Past it, a free went straight to glibc and was counted as lost, its block left in the live
    // table, and the leak scan at exit read the unmapped block: the program died of SIGSEGV
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("handlerfrees", in: dir)
    let trace = dir.appendingPathComponent("frees.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--", program, "2000"])
    // Then the program ends as it does untraced
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "freed 2000\n")
    // And every block is in the trace with its free, and no call was lost
    var made = 0
    var live: Set<AllocID> = []
    var events = try TraceReader(path: trace).events()
    while let event = try events.next() {
      switch event {
      case .alloc(let block) where block.size == 256 * 1024:
        made += 1
        live.insert(block.id)
      case .free(let free): live.remove(free.id)
      default: break
      }
    }
    #expect(made == 2000)
    #expect(live.count == 0)
    #expect(events.metadata.lostEvents.values.reduce(0, +) == 0)
  }

  /// With the program's SIGXFSZ ignored (a write past the limit fails as one on a full disk),
  /// and left as it was: the shim's own writes must not raise it, since it ends the program,
  /// which untraced writes no file (each died of it: the shared buffers' file was the first).
  @Test(arguments: ["ignored", "signal"])
  func aFullDiskStopsTheRecordingButNotTheProgram(fileSizeSignal: String) throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("fulldisk", in: dir)
    let trace = dir.appendingPathComponent("full.trace")
    let result = try Harness.heapline(["record", "-o", trace.path, "--", program, fileSizeSignal])
    // The program finishes with its own output; record fails, and says the trace is cut short
    #expect(result.status == 125)
    #expect(result.stdout == "sum 1999999000000\n")
    #expect(result.stderr.contains("heapline: trace write failed, recording stopped"))
    #expect(result.stderr.contains("is cut short: writing it failed"))
    // What was written before the disk filled is whole and readable
    let size = try #require(
      try FileManager.default.attributesOfItem(atPath: trace.path)[.size] as? Int)
    // The shim stopped at the limit; `record`, not under it, then added what the shared buffers
    // still held (one buffer: a megabyte of events and 64 KiB of side records at most), the
    // symbols and the trailer
    #expect(size <= (1 << 20) + (1 << 20) + 64 * 1024 + 4096)
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    #expect(stats.trace.endReason == .writeFailed)
    let blocks = try #require(stats.category(named: "Malloc 32 Bytes"))
    #expect(blocks.totalCount == blocks.persistentCount)
    #expect(blocks.totalBytes == 24 * blocks.totalCount)
    #expect(blocks.totalCount < 2_000_000)
    // And every command that reads it says it is cut short (only report's text did)
    let notice =
      "heapline: warning: trace '\(trace.path)' is cut short: writing it failed, so what the"
      + " program did after that is missing\n"
    let out = dir.appendingPathComponent("out").path
    for command in [
      ["report", trace.path], ["timeline", trace.path, "-o", out + ".csv"],
      ["objects", trace.path, "-o", out + ".objects.csv"],
      ["export", trace.path, "--format", "folded", "--no-symbolize", "-o", out + ".folded"],
      ["leaks", trace.path, "--no-symbolize"], ["view", trace.path, "-o", out + ".html"],
    ] {
      let read = try Harness.heapline(command)
      #expect(read.stderr.hasPrefix(notice), "\(command[0]): \(read.stderr)")
    }
    // And the report's header calls it incomplete ("Trace complete, a write failed" before)
    let report = try Harness.heapline(["report", trace.path, "--no-symbolize"])
    #expect(
      report.stdout.contains(
        "\n  Trace INCOMPLETE: writing it failed, so what the program did after that is missing\n"))
  }

  @Test(arguments: [[], ["--graph"]])
  func pagesTheProgramProtectsWhileScansRunNeverCrashIt(options: [String]) throws {
    // Given a program whose thread makes the pages of 64 blocks unreadable and readable again
    // for a second, while scans run every 10 ms (and keep their graph)
    let dir = try Harness.temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: dir) }
    let program = try Harness.fixture("guardpages", in: dir)
    let trace = dir.appendingPathComponent("guard.trace").path
    let result = try Harness.heapline(
      ["record", "--leaks-every", "0.01"] + options + ["-o", trace, "--", program, "1"])
    // Then it runs to its end: a scan reads a block's words after the threads run again only
    // through the kernel, which a page made unreadable meanwhile cannot crash
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "toggled yes\n")
    // And the scan at exit finds the 32 blocks it kept no pointer to, exactly
    let leaks = try Harness.heapline(["leaks", trace, "--format", "json", "--no-symbolize"])
    let json = try JSONSerialization.jsonObject(with: Data(leaks.stdout.utf8)) as? [String: Any]
    let lost = json?["definitely_lost"] as? [String: Any]
    #expect(lost?["blocks"] as? Int == 32, "\(leaks.stdout.prefix(600))")
    #expect(lost?["bytes"] as? Int == 32 * 4096)
  }

  @Test func aFullDiskUnderRotationFailsTheRecordAndItsLastFileSaysSo() throws {
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.fixture("fulldisk", in: dir)
    let trace = dir.appendingPathComponent("full.trace")
    let result = try Harness.heapline(["record", "--rotate", "1", "-o", trace.path, "--", program])
    // The program finishes; record fails as it does without rotation
    #expect(result.status == 125, "\(result.stderr)")
    #expect(result.stdout == "sum 1999999000000\n")
    #expect(result.stderr.contains("is cut short: writing it failed"))
    // And the last file is the one whose trailer tells the failure
    let files = try FileManager.default.contentsOfDirectory(atPath: dir.path)
      .filter { $0.hasPrefix("full.") && $0.hasSuffix(".trace") }.sorted()
    let last = try #require(files.last)
    let reader = try TraceReader(path: dir.appendingPathComponent(last).path)
    #expect(reader.trailer?.endReason == .writeFailed)
  }
}
