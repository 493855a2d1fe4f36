import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Folded stacks, speedscope and the comparison of two traces")
struct StackExportTests {
  /// A module at `bias`; stacks main → load (s2) and main → load → decode (s3); returns the
  /// trace: s3 makes 3 × 48 bytes and frees one; s2 a 2,000-byte block, freed; s3 a 1,000.
  static func trace(bias: UInt64 = 0x10000, extra: Int = 0) throws -> TemporaryTrace {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.module(
      TraceModule(
        path: "/nonexistent/libdemo.so", loadBias: bias, segments: [.init(start: 0, size: 0x1000)]))
    chunk.stack(StackID(1), parent: .empty, pc: bias + 0x100)
    chunk.stack(StackID(2), parent: StackID(1), pc: bias + 0x200)
    chunk.stack(StackID(3), parent: StackID(2), pc: bias + 0x300)
    let first = chunk.alloc(at: 1, size: 48, address: 0x1000, stack: StackID(3))
    chunk.alloc(at: 2, size: 48, address: 0x2000, stack: StackID(3))
    chunk.alloc(at: 3, size: 48, address: 0x3000, stack: StackID(3))
    let big = chunk.alloc(at: 4, size: 2_000, address: 0x4000, stack: StackID(2))
    chunk.free(at: 5, first)
    chunk.free(at: 6, big)
    chunk.alloc(at: 7, size: 1_000, address: 0x5000, stack: StackID(3))
    for index in 0..<extra {
      chunk.alloc(
        at: 8 + UInt64(index), size: 48, address: Address(0x9000 + UInt64(index) * 64),
        stack: StackID(2))
    }
    writer.append(chunk)
    writer.appendTrailer(endTime: 100)
    return try TemporaryTrace(writer)
  }

  static func profile(_ trace: TemporaryTrace) throws -> (StackProfile, Statistics) {
    let statistics = try Statistics(contentsOf: trace.path, options: StackProfile.statisticsOptions)
    let profile = StackProfile(
      statistics: statistics, weights: Set(StackWeight.allCases), symbolizer: nil)
    return (profile, statistics)
  }

  @Test("folded lines name frames from the root and weigh what the report totals")
  func folded() throws {
    let (profile, statistics) = try Self.profile(try Self.trace())
    #expect(
      FoldedStacks.render(profile, weight: .live)
        == "libdemo.so+0x100;libdemo.so+0x200;libdemo.so+0x300 1096\n")
    #expect(
      FoldedStacks.render(profile, weight: .allocated)
        == "libdemo.so+0x100;libdemo.so+0x200 2000\n"
        + "libdemo.so+0x100;libdemo.so+0x200;libdemo.so+0x300 1144\n")
    for weight in StackWeight.allCases {
      let sum = FoldedStacks.render(profile, weight: weight).split(separator: "\n")
        .map { UInt64($0.split(separator: " ").last!)! }.reduce(0, +)
      #expect(sum == weight.total(of: statistics.totals), "\(weight)")
    }
  }

  @Test("speedscope files have the schema's shape, one sampled profile per weight, in bytes")
  func speedscope() throws {
    let (profile, statistics) = try Self.profile(try Self.trace())
    let text = SpeedscopeExport.render(profile, weights: StackWeight.allCases, name: "t.trace")
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(json["$schema"] as? String == "https://www.speedscope.app/file-format-schema.json")
    let shared = try #require(json["shared"] as? [String: Any])
    let frames = try #require(shared["frames"] as? [[String: Any]])
    #expect(
      frames.map { $0["name"] as? String } == [
        "libdemo.so+0x100", "libdemo.so+0x200", "libdemo.so+0x300",
      ])
    let profiles = try #require(json["profiles"] as? [[String: Any]])
    #expect(profiles.count == 3)
    for (profile, weight) in zip(profiles, StackWeight.allCases) {
      #expect(profile["type"] as? String == "sampled")
      #expect(profile["unit"] as? String == "bytes")
      #expect(profile["name"] as? String == weight.title)
      #expect(profile["startValue"] as? Int == 0)
      let samples = try #require(profile["samples"] as? [[Int]])
      let weights = try #require(profile["weights"] as? [Int])
      #expect(samples.count == weights.count)
      #expect(samples.allSatisfy { $0.first == 0 && $0.allSatisfy { $0 < frames.count } })
      let total = weight.total(of: statistics.totals)
      #expect(UInt64(weights.reduce(0, +)) == total)
      #expect(profile["endValue"] as? Int == Int(total))
    }
    #expect(json["activeProfileIndex"] as? Int == 0)
  }

  @Test("two runs compare by symbolized stack although their addresses differ")
  func comparison() throws {
    // Given run A, and run B loaded elsewhere that also keeps 3 more 48-byte blocks
    let (a, statsA) = try Self.profile(try Self.trace())
    let (b, statsB) = try Self.profile(try Self.trace(bias: 0x7f00_0000, extra: 3))
    let comparison = TraceComparison(
      a: a, aCategories: statsA.categories, b: b, bCategories: statsB.categories)
    // Then the stack that kept more comes first, matched across the two address spaces
    #expect(
      comparison.stacks.map(\.key) == [
        "libdemo.so+0x100;libdemo.so+0x200", "libdemo.so+0x100;libdemo.so+0x200;libdemo.so+0x300",
      ])
    let grown = comparison.stacks[0]
    #expect((grown.bytesA, grown.countA, grown.bytesB, grown.countB) == (0, 0, 144, 3))
    #expect(grown.deltaBytes == 144)
    let same = comparison.stacks[1]
    #expect((same.bytesA, same.bytesB, same.deltaBytes, same.deltaCount) == (1_096, 1_096, 0, 0))
    #expect(comparison.categories.map(\.key) == ["Malloc 48 Bytes", "Malloc 1008 Bytes"])
    #expect(comparison.categories[0].deltaCount == 3)
    let csv = comparison.csv()
    #expect(csv.hasPrefix("group,name,bytes_a,count_a,bytes_b,count_b,delta_bytes,delta_count\r\n"))
    #expect(csv.contains("category,Malloc 48 Bytes,96,2,240,5,144,3\r\n"))
    let text = comparison.text(pathA: "a.trace", pathB: "b.trace", stackLimit: 1)
    #expect(text.contains("Δ +144 B, +3 blocks"))
    #expect(text.contains("By stack: top 1 of 2"))
  }
}
