import Foundation
import HeaplineAnalysis
import HeaplineTrace
import Testing

@Suite("Report renderers")
struct ReportRendererTests {
  /// 3 blocks of 48 bytes from one stack, 1 freed; a 2 KiB block from another.
  static func report() throws -> (StatisticsReport, TemporaryTrace) {
    var writer = TraceWriter(header: TraceHeader(pid: 99))
    var chunk = writer.makeChunk(threadSerial: 1)
    chunk.module(
      TraceModule(
        path: "/nonexistent/libdemo.so", loadBias: 0x10000,
        segments: [.init(start: 0, size: 0x10000)]))
    chunk.stack(StackID(1), parent: .empty, pc: 0x10100)
    chunk.stack(StackID(2), parent: StackID(1), pc: 0x10200)
    let first = chunk.alloc(at: 1_000, size: 48, address: 0x1000, stack: StackID(2))
    chunk.alloc(at: 2_000, size: 48, address: 0x1040, stack: StackID(2))
    chunk.alloc(at: 3_000, size: 48, address: 0x1080, stack: StackID(2))
    chunk.alloc(at: 4_000, size: 2048, address: 0x8000, stack: StackID(1))
    chunk.free(at: 5_000, first)
    writer.append(chunk)
    writer.appendTrailer(endTime: 2_500_000_000)
    let trace = try TemporaryTrace(writer)
    let statistics = try Statistics(contentsOf: trace.path)
    return (StatisticsReport(statistics: statistics, symbolizer: nil), trace)
  }

  @Test("JSON has schema version 1, the documented keys in order, and exact figures")
  func jsonSchema() throws {
    // Given a report
    let (report, trace) = try Self.report()
    // When it is rendered as JSON
    let text = try JSONReportRenderer().render(report)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    // Then the top-level keys are those documented, in order
    let topKeys = [
      "schema_version", "trace", "totals", "categories", "stack_grouping", "stack_count",
      "top_stacks",
      "backing_stores", "footprint", "footprint_at_peak_rss", "memory_warnings",
      "memory_limit_kill",
    ]
    #expect(Set(json.keys) == Set(topKeys))
    let positions = topKeys.compactMap { text.range(of: "\n  \"\($0)\":")?.lowerBound }
    #expect(positions == positions.sorted() && positions.count == topKeys.count)
    #expect(json["schema_version"] as? Int == 1)
    // And each object has its documented keys
    let traceObject = try #require(json["trace"] as? [String: Any])
    #expect(
      Set(traceObject.keys) == [
        "path", "pid", "recorded_in_process", "start_realtime_ns", "duration_ns", "is_complete",
        "last_complete_chunk_offset", "end_time_ns", "end_reason", "exit_status",
        "recovered_chunks", "cut_short_offset", "cut_short_bytes", "lost_events",
      ])
    #expect(traceObject["path"] as? String == trace.path)
    #expect(traceObject["duration_ns"] as? Int == 2_500_000_000)
    #expect(traceObject["end_time_ns"] is NSNull)
    let totals = try #require(json["totals"] as? [String: Any])
    #expect(
      Set(totals.keys) == [
        "allocations", "frees", "unmatched_frees", "allocated_bytes", "freed_bytes",
        "peak_live_bytes", "peak_live_blocks", "peak_time_ns", "live_bytes", "live_blocks",
        "marks", "rss_samples", "peak_rss_bytes", "last_rss_bytes", "carried_over_blocks",
        "carried_over_bytes",
      ])
    #expect(totals["carried_over_blocks"] as? Int == 0)
    #expect(totals["carried_over_bytes"] as? Int == 0)
    #expect(totals["allocated_bytes"] as? Int == 2_192)
    #expect(totals["peak_live_bytes"] as? Int == 2_192)
    #expect(totals["live_bytes"] as? Int == 2_144)
    let categories = try #require(json["categories"] as? [[String: Any]])
    #expect(categories.map { $0["name"] as? String } == ["Malloc 2.00 KiB", "Malloc 48 Bytes"])
    #expect(
      Set(categories[1].keys) == [
        "id", "name", "kind", "persistent_bytes", "persistent_count", "transient_count",
        "total_bytes", "total_count", "bytes_at_peak",
      ])
    #expect(categories[1]["transient_count"] as? Int == 1)
    let stacks = try #require(json["top_stacks"] as? [[String: Any]])
    #expect(stacks.map { $0["stack_id"] as? Int } == [1, 2])
    #expect(
      Set(stacks[1].keys) == [
        "rank", "stack_id", "bytes_at_peak", "live_bytes", "live_blocks", "allocations",
        "total_bytes", "temporary_allocations", "merged_stacks", "frames",
      ])
    let frames = try #require(stacks[1]["frames"] as? [[String: Any]])
    #expect(frames.map { $0["pc"] as? String } == ["0x10200", "0x10100"])
    #expect(
      frames.map { $0["display_name"] as? String } == ["libdemo.so+0x200", "libdemo.so+0x100"])
    #expect(
      Set(frames[0].keys) == [
        "pc", "function", "display_name", "hidden", "file", "line", "column", "module",
        "module_address", "inlined",
      ])
  }

  @Test("JSON gives a frame that stacks share the role it has in each of them")
  func jsonFrameRolesPerStack() throws {
    // Given a Swift runtime frame under a user frame in one stack, and alone in another (where
    // it is shown, as no user frame is), each stack written three times over
    var writer = TraceWriter(header: TraceHeader(pid: 99))
    var chunk = writer.makeChunk(threadSerial: 1)
    for (path, base) in [("/nonexistent/libswiftCore.so", 0x10000), ("/nonexistent/app", 0x40000)] {
      chunk.module(
        TraceModule(path: path, loadBias: UInt64(base), segments: [.init(start: 0, size: 0x10000)]))
    }
    chunk.stack(StackID(1), parent: .empty, pc: 0x40100)  // app
    chunk.stack(StackID(2), parent: StackID(1), pc: 0x10100)  // runtime, under app
    chunk.stack(StackID(3), parent: .empty, pc: 0x10100)  // runtime alone
    for (index, stack) in [2, 3, 2, 3].enumerated() {
      chunk.alloc(
        at: UInt64(index + 1) * 1_000, size: 48 * UInt64(stack),
        address: Address(rawValue: UInt64(index + 1) * 0x100), stack: StackID(UInt64(stack)))
    }
    writer.append(chunk)
    writer.appendTrailer(endTime: 10_000)
    let trace = try TemporaryTrace(writer)
    let report = StatisticsReport(
      statistics: try Statistics(contentsOf: trace.path), symbolizer: nil)
    // When it is rendered as JSON
    let text = try JSONReportRenderer().render(report)
    let json = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    // Then the runtime frame is hidden as "runtime" under the app's frame, and shown alone
    let stacks = try #require(json["top_stacks"] as? [[String: Any]])
    let hidden = stacks.map { stack in
      ((stack["frames"] as? [[String: Any]]) ?? []).map { $0["hidden"] as? String ?? "shown" }
    }
    let byID = Dictionary(
      uniqueKeysWithValues: zip(stacks.map { $0["stack_id"] as? Int ?? 0 }, hidden))
    #expect(byID == [2: ["runtime", "shown"], 3: ["shown"]])
  }

  @Test("text shows exact bytes, the Object Alloc table and numbered frames")
  func text() throws {
    let (report, trace) = try Self.report()
    let text = try TextReportRenderer().render(report)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    #expect(lines[0] == "Heapline report for '\(trace.path)'")
    #expect(lines[1] == "  Process 99, 2.500 s")
    #expect(lines.contains("  Peak live        2,192 B  (2.14 KiB) in 4 blocks at 4.000 µs"))
    #expect(
      lines.contains(
        "  Category         Persistent Bytes  # Persistent  # Transient  Total Bytes  # Total"))
    #expect(
      lines.contains(
        "  Malloc 2.00 KiB             2,048             1            0        2,048        1"))
    #expect(
      lines.contains(
        "  Malloc 48 Bytes                96             2            1          144        3"))
    #expect(lines.contains("      #0 libdemo.so+0x200  (libdemo.so)"))
    #expect(text.hasSuffix("\n"))
  }

  @Test("text says how many frames the full stack table cut from stacks, when any")
  func stacksCutShort() throws {
    // Given a trace whose trailer counts 1,234 frames the stack table had no room for
    var writer = TraceWriter(header: TraceHeader(pid: 7))
    writer.appendTrailer(
      TraceTrailer(
        endTime: 1_000, eventChunkCount: 0, allocCount: 0, freeCount: 0,
        stackTableBytes: 64 << 20, stackFramesCut: 1_234))
    let trace = try TemporaryTrace(writer)
    let report = StatisticsReport(
      statistics: try Statistics(contentsOf: trace.path), symbolizer: nil)
    // Then the report says so, once
    let text = try TextReportRenderer().render(report)
    let line =
      "  Stacks cut short: 1,234 frames did not fit in the stack table; their stacks end at"
      + " \"(frames lost: the stack table was full)\" under the last frame kept"
    #expect(text.components(separatedBy: line).count == 2, "\(text)")
  }
}
