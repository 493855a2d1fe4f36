import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

/// Swift classes named offline, from what the shim read as plain memory (issue 9): the names of
/// Tests/LeakFixture/NamedTypes.swift, stable between runs, and no allocation of Heapline's own
/// in the program's heap.
@Suite struct SwiftNamesEndToEndTests {
  /// The categories `heapline-leak-fixture names` keeps alive to the end: count and bytes.
  static let kept: [(name: String, count: UInt64, bytes: UInt64)] = [
    ("heapline_leak_fixture.Widget", 10 + 14, 24 * 24),  // and one in each Box<Widget>
    ("heapline_leak_fixture.Outer.Inner", 11 + 15, 26 * 24),  // and one in each Pair
    ("heapline_leak_fixture.Widget.Part", 12, 12 * 24),
    ("heapline_leak_fixture.Box<Swift.Int>", 13, 13 * 24),
    ("heapline_leak_fixture.Box<heapline_leak_fixture.Widget>", 14, 14 * 24),
    ("heapline_leak_fixture.Pair<Swift.String, heapline_leak_fixture.Outer.Inner>", 15, 15 * 40),
    ("heapline_leak_fixture.Node<Swift.Int>.Link<Swift.String>", 16, 16 * 32),
    ("heapline_leak_fixture.Sub<Swift.String>", 17, 17 * 40),
    ("heapline_leak_fixture.Secret", 18, 18 * 24),
    ("heapline_leak_fixture.Box<Swift.Optional<Swift.Int>>", 19, 19 * 25),
    ("heapline_leak_fixture.Box<(Swift.Int, name: Swift.String)>", 20, 20 * 40),
    ("heapline_leak_fixture.Box<(Swift.Int) -> Swift.Int>", 21, 21 * 32),
    ("heapline_leak_fixture.Box<Any>", 22, 22 * 48),
    ("heapline_leak_fixture.Box<Swift.InlineArray<3, Swift.Int>>", 23, 23 * 40),
    ("heapline_leak_fixture.Box<Any.Type>", 24, 24 * 24),
    ("heapline_leak_fixture.Box<heapline_leak_fixture.Shape>", 25, 25 * 56),
    ("Swift._ContiguousArrayStorage<Swift.Int16>", 7, 7 * (32 + 200)),
  ]

  /// Records the fixture; its shim names new types every 0.5 s, within the fixture's 0.6 s pause.
  func recordNames(in dir: URL, _ name: String = "names") throws -> (URL, Harness.Result) {
    let trace = dir.appendingPathComponent("\(name).trace")
    let result = try Harness.heapline(
      ["record", "-o", trace.path, "--", LeakSwiftTests.fixture, "names"],
      environment: ["HEAPLINE_SAMPLE_MS": "10"])
    return (trace, result)
  }

  @Test func twoClassesThatPrintAlikeAreToldApartInTheOrderTheyWereMade() throws {
    // Given a class named Local in each of two functions, 3 objects of the first, 5 of the
    // second: both were one name, two rows alike in report and two columns of one header in
    // timeline, and objects --category merged them
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("samenames", ["-Onone"], in: dir)
    let trace = dir.appendingPathComponent("samenames.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program])
    #expect(result.status == 0, "\(result.stderr)")
    // Then each has a name of its own, numbered in the order the program first made them
    let stats = try Statistics(reader: TraceReader(path: trace))
    #expect(stats.category(named: "samenames.Local #1")?.totalCount == 3)
    #expect(stats.category(named: "samenames.Local #2")?.totalCount == 5)
    #expect(stats.category(named: "samenames.Local") == nil)
    let rows = try Harness.heapline(["objects", trace, "--category", "samenames.Local #2"])
    #expect(try CSVTable(rows.stdout).rows.count == 5)
  }

  @Test func classesAreNamedByModuleNestingAndGenericArgumentsAsTheRuntimeNamesThem() throws {
    // Given a program that keeps a known number of nested, generic and private classes
    let (trace, result) = try recordNames(in: try Harness.temporaryDirectory())
    #expect(result.status == 0)
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    // Then each is a category of its own, with exactly the objects the program kept
    for kept in Self.kept {
      let found = stats.category(named: kept.name)
      let category = try #require(found, "\(kept.name)")
      #expect(category.kind == .swiftClass, "\(kept.name)")
      #expect(category.persistentCount == kept.count, "\(kept.name)")
      #expect(category.persistentBytes == kept.bytes, "\(kept.name)")
    }
    // And the names are the runtime's own (the program prints `String(reflecting:)` and how
    // many it kept), except that a private type's holds an address and ours does not
    let printed = result.stdout.split(separator: "\n").map { $0.split(separator: "\t") }
    #expect(printed.count == 16)
    for line in printed {
      let name = String(line[1])
      let category = name.replacing(/\(unknown context at \$[0-9a-f]+\)\./, with: "")
      let found = stats.category(named: category)
      #expect(found != nil, "\(name)")
      #expect(Self.kept.contains { $0.name == category && $0.count >= UInt64(line[0])! })
    }
    #expect(printed.filter { $0[1].contains("unknown context at $") }.count == 1)
  }

  @Test func twoRecordingsOfTheSameProgramHaveTheSameCategoriesAndNoAddressesInThem() throws {
    // Given two recordings of the same program, each at its own load addresses
    let dir = try Harness.temporaryDirectory()
    let (first, _) = try recordNames(in: dir, "first")
    let (second, _) = try recordNames(in: dir, "second")
    let stats = try [first, second].map { try Statistics(reader: TraceReader(path: $0.path)) }
    let names = stats.map { $0.categories.map(\.name).sorted() }
    // Then they name the same categories, and no name holds an address
    #expect(names[0] == names[1])
    #expect(names[0].contains("heapline_leak_fixture.Secret"))
    for name in names[0] {
      #expect(!name.contains("$") && !name.contains("0x"), "\(name)")
    }
    // And `heapline diff` of the two lists every category live at exit with no change
    let diff = try Harness.heapline(["diff", first.path, second.path, "--format", "csv"])
    #expect(diff.status == 0)
    let rows = diff.stdout.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("category,") }
    #expect(rows.count == stats[0].categories.filter { $0.persistentCount > 0 }.count)
    for row in rows {
      #expect(row.hasSuffix(",0,0"), "\(row)")
    }
  }

  @Test func theTracedProgramMakesExactlyTheAllocationsHeaptrackCounts() throws {
    // Given the same program run under heaptrack and under Heapline. (heaptrack's own preload
    // library loads libstdc++, whose 72,704-byte exception pool it then counts in a C program;
    // a Swift program loads libstdc++ itself, so here both tracers see the same calls.)
    let dir = try Harness.temporaryDirectory()
    let output = dir.appendingPathComponent("names.heaptrack").path
    let heaptrack = try Harness.run(
      "/usr/bin/timeout", ["120", "heaptrack", "-o", output, LeakSwiftTests.fixture, "names"])
    #expect(heaptrack.status == 0, "\(heaptrack.stderr)")
    let file = try #require(
      try FileManager.default.contentsOfDirectory(atPath: dir.path)
        .first { $0.hasPrefix("names.heaptrack") })
    let printed = try Harness.run(
      "/usr/bin/timeout", ["120", "heaptrack_print", "-f", dir.appendingPathComponent(file).path])
    let line = try #require(
      printed.stdout.split(separator: "\n").first { $0.hasPrefix("calls to allocation functions:") }
    )
    let counted = try #require(UInt64(line.split(separator: " ")[4]))
    let (trace, _) = try recordNames(in: dir)
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    // Then Heapline traced every allocation heaptrack saw. (A shim that named types through
    // the runtime filled the runtime's caches from its own thread, untraced, and the program's
    // own calls then allocated less: 746 traced against heaptrack's 799.)
    #expect(stats.totals.allocationCount == counted)
  }

  @Test func aSwiftProgramThatLeaksNothingHasNoDefinitelyLostBlocks() throws {
    // Given a program whose objects all stay reachable from its globals, with its classes named
    // (naming allocates nothing the scan could find unreachable)
    let (trace, result) = try recordNames(in: try Harness.temporaryDirectory())
    #expect(result.status == 0)
    let report = try LeakReport.read(path: trace.path, scan: 1, symbolizer: nil)
    #expect(report.definitelyLost == LeakAmount())
    #expect(report.indirectlyLost == LeakAmount())
    #expect(report.possiblyLost == LeakAmount())
    #expect(report.groups.isEmpty, "\(report.groups.map(\.name))")
    #expect(try Harness.heapline(["leaks", trace.path]).status == 0)
  }

  @Test func anObjectFreedByAnotherThreadOrLastOfAThreadThatNeverAllocatesAgainIsNamed() throws {
    // Given objects that another thread frees before the thread that made them calls malloc
    // again, and a thread's last allocation, the first of its class, before it waits for good
    let trace = try Harness.temporaryDirectory().appendingPathComponent("handoff.trace")
    let result = try Harness.heapline(
      ["record", "--no-leaks", "-o", trace.path, "--", LeakSwiftTests.fixture, "handoff"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "handed over 20, kept 1\n")
    let stats = try Statistics(reader: TraceReader(path: trace.path))
    // Then each is counted under its class, and every category has a name
    let handedOver = try #require(stats.category(named: "heapline_leak_fixture.HandedOver"))
    #expect(handedOver.totalCount == 20)
    #expect(handedOver.totalBytes == 20 * 48)
    #expect(handedOver.persistentCount == 0)
    let last = try #require(stats.category(named: "heapline_leak_fixture.LastOfItsThread"))
    #expect(last.persistentCount == 1)
    #expect(last.persistentBytes == 24)
    #expect(!stats.categories.contains { $0.name.hasPrefix("Category ") })
  }

  @Test func objectsThatAnotherThreadFreesWhileTheirOwnThreadAllocatesAreNamed() throws {
    // Given 20,000 objects queued for a consumer thread that drops them as they come, often
    // while the thread that made one is inside its next malloc, past the point where another
    // thread's free could name it (1 run in 4 kept 1 of 10,000 in its size class)
    let dir = try Harness.temporaryDirectory()
    for run in 1...4 {
      let trace = dir.appendingPathComponent("stream-\(run).trace").path
      let result = try Harness.heapline(
        ["record", "--no-leaks", "-o", trace, "--", LeakSwiftTests.fixture, "stream"])
      #expect(result.status == 0, "\(result.stderr)")
      #expect(result.stdout == "streamed 20000\n")
      // Then every one is counted under its class, in every run
      let stats = try Statistics(reader: TraceReader(path: trace))
      let streamed = stats.category(named: "heapline_leak_fixture.Streamed")
      #expect(streamed?.totalCount == 20_000, "run \(run)")
      #expect(streamed?.totalBytes == 20_000 * 40, "run \(run)")
    }
  }

  @Test func aProgramWithThousandsOfClassesHasEveryOneNamedDeepGenericsToo() throws {
    // Given 4,900 classes, Pair<A, B> for A and B each of 70 types made at run time (Int,
    // Tag<Int>, Tag<Tag<Int>>, …, 69 deep), one object of each kept to the end: more than the
    // 4,096 categories the shim had room for, and names deeper than its 64 nodes
    let dir = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("manyclasses", ["-Onone"], in: dir)
    let trace = dir.appendingPathComponent("manyclasses.trace").path
    let result = try Harness.heapline(["record", "--no-leaks", "-o", trace, "--", program, "70"])
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stdout == "made 4900 objects of 4900 classes\n")
    // Then the trace reads, with no category missing, and every class has its one object of
    // 24 bytes under a name of its own (the deepest cut short where the shim stopped)
    let reader = try TraceReader(path: trace)
    #expect(reader.trailer?.flags.contains(.categoriesFull) == false)
    let stats = try Statistics(reader: reader)
    let pairs = stats.categories.filter { $0.name.hasPrefix("manyclasses.Pair<") }
    #expect(pairs.count == 4_900)
    #expect(pairs.filter { $0.persistentCount == 1 && $0.persistentBytes == 24 }.count == 4_900)
    #expect(stats.category(named: "manyclasses.Pair<Swift.Int, Swift.Int>")?.persistentCount == 1)
    #expect(stats.category(named: "Malloc 32 Bytes")?.persistentCount ?? 0 < 100)
  }
}
