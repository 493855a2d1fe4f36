import Foundation
import HeaplineAnalysis
import HeaplineTrace

/// The file that `heapline merge` writes: the runs of one program as one ``HeapProfile``, with
/// their stacks matched by symbol. It keeps what `report` and `export --format pprof` show of
/// several traces (each run's source and peak, and per stack and category the four heap
/// figures, summed), so a CI job keeps one small artifact for many shards, and merged files
/// merge again. It has no events: the commands that replay them take a trace.
///
/// The layout: the 8 bytes `HLMERGED`, then one gzip member of JSON (``Body``), whose frames
/// are stored once and named by index from the samples.
public enum MergedProfile {
  /// The first bytes of a merged file.
  public static let magic = Array("HLMERGED".utf8)
  /// The version of ``Body`` that this code writes and reads.
  public static let version = 1
  /// The most that a merged file's JSON may inflate to: far beyond any real profile, and a
  /// bound on what a damaged file can make the reader allocate.
  static let maximumBodyBytes = 1 << 30

  /// Whether the file at `path` starts as a merged file does; `false` when it cannot be read
  /// or is not a regular file (a FIFO would block the read: the trace reader refuses it).
  public static func isMerged(path: String) -> Bool {
    let type = try? FileManager.default.attributesOfItem(atPath: path)[.type] as? FileAttributeType
    guard type == .typeRegular, let handle = FileHandle(forReadingAtPath: path) else {
      return false
    }
    defer { try? handle.close() }
    return (try? handle.read(upToCount: magic.count)).map { Array($0) == magic } ?? false
  }

  /// The bytes of a merged file holding `profile`.
  public static func encoded(_ profile: HeapProfile) throws(AnalysisError) -> [UInt8] {
    let json: Data
    do {
      json = try JSONEncoder().encode(Body(profile))
    } catch {
      throw .outputFailed(path: "merged profile", "\(error)")
    }
    return magic + (try Gzip.compress(Array(json)))
  }

  /// The profile in the merged file at `path`, named in `style`.
  public static func read(path: String, style: FrameStyle) throws(AnalysisError) -> HeapProfile {
    let bytes: Data?
    do {
      let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
      defer { try? handle.close() }
      bytes = try handle.readToEnd()
    } catch {
      throw .invalidOption("cannot read '\(path)': \(error.localizedDescription)")
    }
    return try decode(Array(bytes ?? Data()), path: path, style: style)
  }

  /// The profile in the merged file `bytes`, read from `path`, named in `style`.
  public static func decode(
    _ bytes: [UInt8], path: String, style: FrameStyle
  ) throws(AnalysisError) -> HeapProfile {
    guard bytes.starts(with: magic) else { throw damaged(path, "it does not start with HLMERGED") }
    let member = Array(bytes.dropFirst(magic.count))
    // gzip's last 4 bytes are the data's length (mod 2^32): the buffer to inflate into.
    let length = member.suffix(4).reversed().reduce(0) { $0 << 8 | Int($1) }
    guard member.count >= 18, length <= maximumBodyBytes else {
      throw damaged(path, "its data is cut short or too large")
    }
    let json: [UInt8]
    do {
      json = try Gzip.decompress(member, capacity: max(length, 1))
    } catch {
      throw damaged(path, "its data does not decompress")
    }
    let body: Body
    do {
      body = try JSONDecoder().decode(Body.self, from: Data(json))
    } catch {
      throw damaged(path, "its data is not a merged profile")
    }
    guard body.version == version else {
      throw damaged(path, "it is version \(body.version), and this heapline reads \(version)")
    }
    return try body.profile(path: path, style: style)
  }

  static func damaged(_ path: String, _ why: String) -> AnalysisError {
    .invalidOption("'\(path)' is not a readable merged profile: \(why)")
  }
}

extension MergedProfile {
  /// The JSON of a merged file.
  struct Body: Codable {
    var version: Int
    var runs: [Run]
    var frames: [Frame]
    var samples: [Sample]

    struct Run: Codable {
      var path: String
      var modules: [Module]
      var start: UInt64
      var duration: UInt64
      var peakLiveBytes: UInt64
      var peakTime: UInt64?
      var sampleMeanBytes: UInt64?
      var totals: HeapProfile.Totals?
    }

    struct Module: Codable {
      var path: String
      var loadBias: UInt64
      var segments: [[UInt64]]  // start, size
      var buildID: [UInt8]
    }

    struct Frame: Codable, Hashable {
      var pc: UInt64
      var function: String?
      var simplifiedFunction: String?
      var systemName: String?
      var isThunk: Bool
      var file: String?
      var line: Int?
      var column: Int?
      var modulePath: String?
      var moduleAddress: UInt64?
      var isInlined: Bool
    }

    struct Sample: Codable {
      var frames: [Int]
      var category: String
      var allocatedObjects: UInt64
      var allocatedBytes: UInt64
      var liveObjects: UInt64
      var liveBytes: UInt64
      var run: Int
    }
  }
}
