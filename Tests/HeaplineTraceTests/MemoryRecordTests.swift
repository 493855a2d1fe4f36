import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Backing stores, memory warnings, footprints and kills in traces")
struct MemoryRecordTests {
  static let images = CategoryID(0x400)
  static let buffers = CategoryID(0x401)
  static let mib: UInt64 = 1 << 20

  /// Thread 1 reports 3 "Images" stores of 4 MiB (ids 1, 2, 3) and releases 2; a 1 MiB
  /// "Buffers" store (id 9) is reported, then reported again at 2 MiB; a release of id 77 that
  /// was never reported. Thread 2 raises a warning that one observer answers and an urgent one
  /// that two answer. The shim's thread writes a footprint and a memory-limit kill.
  static func trace() throws -> TemporaryTrace {
    var writer = TraceWriter(header: TraceHeader(pid: 7))
    var main = writer.makeChunk(threadSerial: 1)
    main.category(images, kind: .backingStore, name: "Images")
    main.category(buffers, kind: .backingStore, name: "Buffers")
    main.stack(StackID(1), parent: .empty, pc: 0x1000)
    main.stack(StackID(2), parent: .empty, pc: 0x2000)
    for id: UInt64 in 1...3 {
      main.backingStore(
        at: id * 1_000, .allocated, id: id, bytes: 4 * mib, category: images, stack: StackID(1))
    }
    main.backingStore(at: 4_000, .released, id: 2, bytes: 4 * mib, category: images)
    main.backingStore(
      at: 5_000, .allocated, id: 9, bytes: mib, category: buffers, stack: StackID(2))
    main.backingStore(at: 6_000, .released, id: 9, bytes: mib, category: buffers)
    main.backingStore(
      at: 6_000, .allocated, id: 9, bytes: 2 * mib, category: buffers, stack: StackID(2))
    main.backingStore(at: 7_000, .released, id: 77, bytes: 0, category: CategoryID(0))
    main.alloc(at: 7_500, size: 48, address: 0x9000)
    writer.append(main)
    var other = writer.makeChunk(threadSerial: 2)
    other.memoryWarning(
      at: 10_000,
      MemoryWarning(serial: 1, level: .warning, source: .timer, footprintBytes: 20 * mib))
    other.warningResponse(
      at: 11_000, WarningResponse(serial: 1, observer: "cache", freedBytes: 3 * mib))
    other.memoryWarning(
      at: 20_000,
      MemoryWarning(
        serial: 2, level: .urgent, source: .memoryLimit, footprintBytes: 27 * mib,
        limitBytes: 30 * mib))
    other.warningResponse(
      at: 21_000, WarningResponse(serial: 2, observer: "cache", freedBytes: mib))
    other.warningResponse(
      at: 22_000, WarningResponse(serial: 2, observer: "thumbnails", freedBytes: 512))
    writer.append(other)
    var shim = writer.makeChunk(threadSerial: 0)
    shim.rss(at: 29_000, residentBytes: 25 * mib)
    shim.memoryLimitExceeded(
      at: 30_000, MemoryLimitExceeded(footprintBytes: 31 * mib, limitBytes: 30 * mib))
    shim.footprint(
      at: 30_500,
      Footprint(
        reason: .memoryLimit, residentBytes: 31 * mib, mallocLiveBytes: 48,
        mallocUsableBytes: 56, mallocLiveBlocks: 1, backingStoreBytes: 10 * mib,
        allocatorFreeBytes: 4_096))
    writer.append(shim)
    writer.appendTrailer(endTime: 31_000, endReason: .memoryLimit)
    return try TemporaryTrace(writer)
  }

  @Test("every new record reads back as written")
  func roundTrip() throws {
    let (events, metadata) = try Self.trace().events()
    #expect(metadata.category(Self.images).kind == .backingStore)
    let stores = events.compactMap { event -> BackingStoreEvent? in
      if case .backingStore(let store) = event { store } else { nil }
    }
    #expect(stores.count == 8)
    #expect(
      stores[0]
        == BackingStoreEvent(
          time: 1_000, kind: .allocated, id: 1, bytes: 4 * Self.mib, category: Self.images,
          stack: StackID(1), threadSerial: 1))
    let memory = events.compactMap { event -> MemoryEvent.Detail? in
      if case .memory(let memory) = event { memory.detail } else { nil }
    }
    #expect(memory.count == 7)
    #expect(
      memory[1] == .response(WarningResponse(serial: 1, observer: "cache", freedBytes: 3 << 20)))
    // A warning is a MARK of kind 2 named after its level, as the timeline shows it
    let marks = events.compactMap { event -> MarkEvent? in
      if case .mark(let mark) = event { mark } else { nil }
    }
    #expect(marks.map(\.name) == ["warning", "urgent"])
    #expect(marks.allSatisfy { $0.kind == .memoryWarning })
  }

  @Test("backing stores are counted per category, with peaks, replacements and strays")
  func backingStoreStatistics() throws {
    let trace = try Self.trace()
    let stats = try Statistics(contentsOf: trace.path)
    let stores = stats.backingStores
    #expect(stores.liveBytes == 10 * Self.mib)
    #expect(stores.liveCount == 3)
    #expect(stores.peakBytes == 12 * Self.mib)  // three images, before the first release
    #expect(stores.peakTime == 3_000)
    #expect(stores.totalCount == 5)
    #expect(stores.unmatchedReleaseCount == 1)
    let images = try #require(stores.category(named: "Images"))
    #expect(images.persistentBytes == 8 * Self.mib)
    #expect(images.persistentCount == 2)
    #expect(images.transientCount == 1)
    #expect(images.totalBytes == 12 * Self.mib)
    #expect(images.peakBytes == 12 * Self.mib)
    let buffers = try #require(stores.category(named: "Buffers"))
    #expect(buffers.persistentBytes == 2 * Self.mib)
    #expect(buffers.transientCount == 1)
    #expect(buffers.peakBytes == 2 * Self.mib)
    #expect(stores.categories.map(\.name) == ["Images", "Buffers"])
    #expect(stores.topStacks.first?.id == StackID(1))
    // Malloc's figures are untouched by backing stores
    #expect(stats.totals.liveBytes == 48)
  }

  @Test("warnings carry their responses; the footprint and the kill are kept")
  func warningsFootprintAndKill() throws {
    let trace = try Self.trace()
    let stats = try Statistics(contentsOf: trace.path)
    #expect(stats.memoryWarnings.map(\.warning.level) == [.warning, .urgent])
    #expect(stats.memoryWarnings.map(\.freedBytes) == [3 << 20, (1 << 20) + 512])
    #expect(stats.memoryWarnings[1].warning.limitBytes == 30 * Self.mib)
    #expect(stats.memoryWarnings[1].responses.map(\.observer) == ["cache", "thumbnails"])
    let footprint = stats.footprint
    #expect(footprint.isMeasured)
    #expect(footprint.residentBytes == 31 * Self.mib)
    #expect(footprint.mallocOverheadBytes == 8)
    #expect(footprint.unaccountedBytes == Int64(21 * Self.mib) - 56)
    #expect(stats.memoryLimitKill?.limit.limitBytes == 30 * Self.mib)
    #expect(stats.trace.endReason == .memoryLimit)
  }

  @Test("the footprint at the peak of RSS holds what malloc and the stores held then")
  func footprintAtPeakRSS() throws {
    let trace = try Self.trace()
    let stats = try Statistics(contentsOf: trace.path)
    let peak = try #require(stats.footprintAtPeakRSS)
    #expect(peak.time == 29_000)
    #expect(peak.residentBytes == 25 * Self.mib)
    #expect(peak.backingStoreBytes == 10 * Self.mib)
    #expect(peak.mallocLiveBytes == 48)
    #expect(peak.unaccountedBytes == Int64(15 * Self.mib) - 48)
  }

  @Test("without a footprint record, the breakdown is estimated from the statistics")
  func estimatedFootprint() throws {
    let trace = try Self.trace()
    let stats = try Statistics(
      contentsOf: trace.path, options: StatisticsOptions(upTo: .nanoseconds(29_500)))
    #expect(!stats.footprint.isMeasured)
    #expect(stats.footprint.mallocOverheadBytes == nil)
    #expect(stats.footprint.backingStoreBytes == 10 * Self.mib)
    #expect(stats.footprint.unaccountedBytes == Int64(15 * Self.mib) - 48)
  }

  @Test("the text and JSON reports show the new sections; the low-memory report names the biggest")
  func reports() throws {
    let trace = try Self.trace()
    let stats = try Statistics(contentsOf: trace.path)
    let report = StatisticsReport(statistics: stats, symbolizer: nil)
    let text = try TextReportRenderer().render(report)
    #expect(
      text.contains(
        "  Images           8,388,608             2            1   12,582,912        3  12,582,912")
    )
    #expect(text.contains("  Malloc overhead           8 B  usable size minus requested size"))
    #expect(text.contains("Memory limit exceeded at 30.000 µs"))
    #expect(text.contains("cache 1,048,576, thumbnails 512"))
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(JSONReportRenderer().render(report).utf8))
        as? [String: Any])
    let backing = try #require(json["backing_stores"] as? [String: Any])
    #expect(backing["live_bytes"] as? Int == 10 << 20)
    let warnings = try #require(json["memory_warnings"] as? [[String: Any]])
    #expect(warnings.map { $0["source"] as? String } == ["timer", "memory_limit"])
    #expect((json["memory_limit_kill"] as? [String: Any])?["limit_bytes"] as? Int == 30 << 20)
    #expect((json["footprint"] as? [String: Any])?["malloc_overhead_bytes"] as? Int == 8)
    let lowMemory = LowMemoryReportRenderer(program: "app").render(report)
    let lines = lowMemory.split(separator: "\n").map(String.init)
    let title = try #require(lines.firstIndex(of: "Largest categories, live at the kill"))
    #expect(lines[title + 2].hasPrefix("  Images           backing store        8,388,608"))
    #expect(lowMemory.contains("urgent"))
  }
}
