import Foundation
import Testing

/// `heapline record --graph` and `heapline retainers` on a Swift program whose objects' holders
/// the test knows (Fixtures/retainers.swift): a cache held by a global through a dictionary,
/// images held by closures in an observer list, and images held only from a thread's stack.
@Suite struct RetainersEndToEndTests {
  /// One recording of the fixture, with what it printed: each cached image's offset in the
  /// dictionary's storage, and the id of the thread whose stack holds the parked images.
  struct Recording {
    var trace: String
    var cacheOffsets: [UInt64]
    var thread: String
  }

  /// Made once, for all the tests (a Swift global's initialization runs once, under a lock).
  static let shared = Result { try record() }

  static func record() throws -> Recording {
    let directory = try Harness.temporaryDirectory()
    let program = try Harness.swiftFixture("retainers", ["-Onone"], in: directory)
    let trace = directory.appendingPathComponent("retainers.trace").path
    let result = try Harness.heapline(["record", "-o", trace, "--graph", "--", program])
    try #require(result.status == 0, "\(result.stderr)")
    let lines = result.stdout.split(separator: "\n").map(String.init)
    try #require(lines.count == 3 && lines[2] == "check 0", "\(result.stdout)")
    let offsets = lines[0].split(separator: " ").dropFirst().compactMap { UInt64($0) }
    return Recording(
      trace: trace, cacheOffsets: offsets, thread: String(lines[1].dropFirst("thread ".count)))
  }

  /// `heapline retainers --format json`'s paths, each as its count, root and steps in one line:
  /// `1 global retainers.cache+0x0 → Swift.Array…+0x28`.
  static func paths(_ trace: String, _ category: String, scan: Int? = nil) throws -> [String] {
    let scanArguments = scan.map { ["--scan", String($0)] } ?? []
    let result = try Harness.heapline(
      ["retainers", trace, "--category", category, "--format", "json"] + scanArguments)
    try #require(result.status == 0, "\(result.stderr)")
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
    let paths = try #require(object["paths"] as? [[String: Any]])
    return try paths.map { path in
      let root = try #require(path["root"] as? [String: Any])
      let offset = (root["offset"] as? Int).map { "+0x" + String($0, radix: 16) } ?? ""
      let steps = try #require(path["steps"] as? [[String: Any]]).map {
        " → \($0["category"] as? String ?? "?")+0x\(String($0["offset"] as? Int ?? -1, radix: 16))"
      }
      return "\(path["count"] as? Int ?? -1) \(root["kind"] as? String ?? "?") "
        + "\(root["name"] as? String ?? "?")\(offset)" + steps.joined()
    }
  }

  @Test func eachCachedImageIsHeldByTheGlobalThroughTheDictionary() throws {
    let recording = try Self.shared.get()
    try #require(recording.cacheOffsets.count == 3)
    let storage = "Swift._DictionaryStorage<Swift.String, retainers.CachedImage>"
    // Three images in three buckets: three paths of one image each
    #expect(
      try Self.paths(recording.trace, "retainers.CachedImage").sorted()
        == recording.cacheOffsets.map {
          "1 global retainers.cache+0x0 → \(storage)+0x\(String($0, radix: 16))"
        })
  }

  @Test func aClassIsNamedWithoutItsModuleAsTheLeakReportShowsIt() throws {
    let recording = try Self.shared.get()
    #expect(
      try Self.paths(recording.trace, "CachedImage")
        == Self.paths(recording.trace, "retainers.CachedImage"))
  }

  @Test func observedImagesAreHeldByClosuresInTheObserverList() throws {
    let recording = try Self.shared.get()
    let paths = try Self.paths(recording.trace, "retainers.ObservedImage")
    let prefix =
      "1 global retainers.center+0x0 → retainers.ObserverCenter+0x10"
      + " → Swift._ContiguousArrayStorage<() -> Swift.Int>"
    #expect(
      paths.sorted() == [
        prefix + "+0x28 → Swift closure context+0x10",
        prefix + "+0x38 → Swift closure context+0x10",
      ])
  }

  @Test func parkedImagesAreHeldOnlyFromTheirThreadsStack() throws {
    let recording = try Self.shared.get()
    // At the scan the main thread made while the other waited (scan 1; they are gone at exit):
    // two images (24 bytes each), one path, since a stack's offsets change from run to run
    #expect(
      try Self.paths(recording.trace, "retainers.ParkedImage", scan: 1)
        == ["2 stack thread \(recording.thread)"])
    let text = try Harness.heapline(
      ["retainers", recording.trace, "--category", "retainers.ParkedImage", "--scan", "1"])
    #expect(
      text.stdout.hasSuffix(
        "\n2 objects, 48 bytes:\n  stack of thread \(recording.thread)\n  → retainers.ParkedImage\n"
      ))
  }

  @Test func aTraceWithoutAGraphOrWithoutTheCategoryOrScanIsAOneLineError() throws {
    let recording = try Self.shared.get()
    let unknown = try Harness.heapline(
      ["retainers", recording.trace, "--category", "retainers.Nothing"])
    #expect(unknown.status == 1)
    #expect(
      unknown.stderr
        == "heapline: no allocation of '\(recording.trace)' is in a category named"
        + " 'retainers.Nothing'\n")
    let outOfRange = try Harness.heapline(
      ["retainers", recording.trace, "--category", "retainers.ParkedImage", "--scan", "9"])
    #expect(outOfRange.status == 1)
    #expect(
      outOfRange.stderr
        == "heapline: trace '\(recording.trace)' has no leak scan 9 (its scans: 1 to 2)\n")
    // The scan at exit kept a graph too; a trace recorded without --graph has none
    let directory = try Harness.temporaryDirectory()
    let plain = directory.appendingPathComponent("plain.trace").path
    let program = try Harness.swiftFixture("retainers", ["-Onone"], in: directory)
    try #require(try Harness.heapline(["record", "-o", plain, "--", program]).status == 0)
    let graphless = try Harness.heapline(
      ["retainers", plain, "--category", "retainers.ParkedImage"])
    #expect(graphless.status == 1)
    #expect(
      graphless.stderr
        == "heapline: trace '\(plain)' holds no leak scan with a graph (record with --graph)\n")
    let zero = try Harness.heapline(
      ["retainers", plain, "--category", "retainers.ParkedImage", "--scan", "0"])
    #expect(zero.status == 64)
  }
}
