import HeaplineAnalysis
import HeaplineTrace
import Testing

@testable import HeaplinePprof

@Suite struct PprofEncoderTests {
  /// A program loaded at `bias`: make_blocks calls malloc at blocks.c:9 and is called by main.
  static func profile(bias: UInt64, path: String = "a.trace", live: UInt64 = 600) -> HeapProfile {
    let module = TraceModule(
      path: "/bin/blocks", loadBias: bias,
      segments: [.init(start: 0, size: 0x1000), .init(start: 0x1000, size: 0x3000)],
      buildID: [0xab, 0x01, 0xff])
    func frame(_ offset: UInt64, _ function: String, line: Int, inlined: Bool = false)
      -> SymbolizedFrame
    {
      var frame = SymbolizedFrame(
        pc: bias + offset, function: function, file: "/src/blocks.c", line: line,
        modulePath: module.path, moduleAddress: offset, isInlined: inlined)
      frame.systemName = "sys_" + function
      return frame
    }
    // fill is inlined into make_table, at one return address.
    let frames = [
      frame(0x1100, "make_blocks", line: 9), frame(0x1200, "main", line: 20),
      frame(0x1300, "fill", line: 40, inlined: true), frame(0x1300, "make_table", line: 33),
      frame(0x1210, "main", line: 21),
    ]
    let blocks = HeapProfile.Sample(
      frames: [0, 1], category: "Malloc 48 Bytes", allocatedObjects: 1_000,
      allocatedBytes: 48_000, liveObjects: live, liveBytes: live * 48, run: 0)
    let table = HeapProfile.Sample(
      frames: [2, 3, 4], category: "Table", allocatedObjects: 3, allocatedBytes: 3_000,
      liveObjects: 0, liveBytes: 0, run: 0)
    let run = HeapProfile.Run(
      path: path, modules: [module], startNanoseconds: 1_000_000_000,
      durationNanoseconds: 2_000_000, peakLiveBytes: 51_000, peakTime: 1_500_000)
    return HeapProfile(samples: [blocks, table], frames: frames, runs: [run], style: FrameStyle())
  }

  static func decode(_ profile: HeapProfile, comments: [String] = []) throws
    -> Perftools_Profiles_Profile
  {
    try Perftools_Profiles_Profile(
      serializedBytes: PprofEncoder.encoded(profile, comments: comments))
  }

  @Test func samplesCarryGoHeapTypesInOrderAndTheCategoryAsALabel() throws {
    let message = try Self.decode(Self.profile(bias: 0x5555_0000_0000))
    let strings = message.stringTable
    #expect(strings[0] == "")
    #expect(
      message.sampleType.map { "\(strings[Int($0.type)])/\(strings[Int($0.unit)])" } == [
        "alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes",
      ])
    #expect(message.sample.map(\.value) == [[1_000, 48_000, 600, 28_800], [3, 3_000, 0, 0]])
    #expect(
      message.sample.map { $0.label.map { "\(strings[Int($0.key)])=\(strings[Int($0.str)])" } }
        == [["category=Malloc 48 Bytes"], ["category=Table"]])
    #expect(message.timeNanos == 1_000_000_000)
    #expect(message.durationNanos == 2_000_000)
  }

  @Test func locationsHoldInlinedFunctionsAndFunctionsAreNamedOnce() throws {
    let message = try Self.decode(Self.profile(bias: 0x5555_0000_0000))
    let strings = message.stringTable
    let functions = Dictionary(uniqueKeysWithValues: message.function.map { ($0.id, $0) })
    let locations = Dictionary(uniqueKeysWithValues: message.location.map { ($0.id, $0) })
    func describe(_ id: UInt64) -> String {
      locations[id]!.line.map { line in
        let function = functions[line.functionID]!
        return "\(strings[Int(function.name)]) (\(strings[Int(function.systemName)])) "
          + "\(strings[Int(function.filename)]):\(line.line)"
      }.joined(separator: " < ")
    }
    #expect(
      message.sample.map { $0.locationID.map(describe) } == [
        ["make_blocks (sys_make_blocks) /src/blocks.c:9", "main (sys_main) /src/blocks.c:20"],
        [
          "fill (sys_fill) /src/blocks.c:40 < make_table (sys_make_table) /src/blocks.c:33",
          "main (sys_main) /src/blocks.c:21",
        ],
      ])
    #expect(message.location.count == 4)
    // main appears at two lines but is one function
    #expect(message.function.count == 4)
    #expect(
      message.location.map(\.address) == [
        0x5555_0000_1100, 0x5555_0000_1200, 0x5555_0000_1300, 0x5555_0000_1210,
      ])
  }

  @Test func theMappingSpansTheModuleAndCarriesItsBuildID() throws {
    let message = try Self.decode(Self.profile(bias: 0x5555_0000_0000))
    #expect(message.mapping.count == 1)
    let mapping = try #require(message.mapping.first)
    #expect(mapping.memoryStart == 0x5555_0000_0000)
    #expect(mapping.memoryLimit == 0x5555_0000_4000)
    #expect(message.stringTable[Int(mapping.buildID)] == "ab01ff")
    #expect(message.stringTable[Int(mapping.filename)] == "/bin/blocks")
    #expect(mapping.hasFunctions_p && mapping.hasLineNumbers_p && mapping.hasInlineFrames_p)
    #expect(message.location.allSatisfy { $0.mappingID == mapping.id })
  }

  @Test func runsMergeByFunctionAndLineThoughTheirAddressesDiffer() throws {
    // Given the same program loaded at two addresses, the second run with 100 blocks live
    let first = Self.profile(bias: 0x5555_0000_0000, path: "a.trace")
    let second = Self.profile(bias: 0x7777_0000_0000, path: "b.trace", live: 100)
    // When merged
    let merged = HeapProfile(merging: [first, second])
    // Then each stack is one sample with the sums, on the first run's addresses
    #expect(merged.samples.count == 2)
    #expect(merged.samples[0].allocatedObjects == 2_000)
    #expect(merged.samples[0].allocatedBytes == 96_000)
    #expect(merged.samples[0].liveObjects == 700)
    #expect(merged.samples[0].liveBytes == 33_600)
    #expect(merged.samples[1].allocatedBytes == 6_000)
    #expect(merged.samples.allSatisfy { $0.run == 0 })
    // And each run's peak is told with its trace
    #expect(
      merged.runComments == [
        "run 1 of 2: a.trace, peak 51,000 bytes live at 1.500 ms",
        "run 2 of 2: b.trace, peak 51,000 bytes live at 1.500 ms",
      ])
  }

  @Test func aSampleOnlyTheSecondRunHasKeepsThatRunsMapping() throws {
    var second = Self.profile(bias: 0x7777_0000_0000, path: "b.trace")
    second.samples[1].category = "Other"
    let merged = HeapProfile(merging: [Self.profile(bias: 0x5555_0000_0000), second])
    let message = try Self.decode(merged)
    #expect(message.sample.count == 3)
    #expect(message.mapping.map(\.memoryStart) == [0x5555_0000_0000, 0x7777_0000_0000])
    let third = try #require(message.sample.last)
    let locations = Dictionary(uniqueKeysWithValues: message.location.map { ($0.id, $0) })
    #expect(
      third.locationID.map { locations[$0]!.address } == [0x7777_0000_1300, 0x7777_0000_1210])
    #expect(locations[third.locationID[0]]!.mappingID == message.mapping[1].id)
  }

  @Test func theGzippedProfileInflatesToTheEncodedOne() throws {
    let profile = Self.profile(bias: 0x1000_0000)
    let gzipped = try PprofEncoder.gzipped(profile)
    #expect(Array(gzipped.prefix(2)) == [0x1f, 0x8b])
    #expect(try Gzip.decompress(gzipped, capacity: 1 << 20) == PprofEncoder.encoded(profile))
  }
}
