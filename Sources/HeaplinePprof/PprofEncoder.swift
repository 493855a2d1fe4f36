import HeaplineAnalysis
import HeaplineTrace
import SwiftProtobuf

/// Encodes a ``HeapProfile`` as pprof's `profile.proto`, with the sample types of Go's heap
/// profiles: `alloc_objects`, `alloc_space`, `inuse_objects`, `inuse_space`.
///
/// ```swift
/// try output.write(bytes: PprofEncoder.gzipped(profile))  // what `go tool pprof` reads
/// ```
public enum PprofEncoder {
  /// The sample types, in the order of each sample's values.
  public static let sampleTypes = [
    ("alloc_objects", "count"), ("alloc_space", "bytes"), ("inuse_objects", "count"),
    ("inuse_space", "bytes"),
  ]

  /// The string label that names a sample's category.
  public static let categoryLabel = "category"

  /// The profile, gzipped, as pprof keeps profiles on disk.
  public static func gzipped(_ profile: HeapProfile, comments: [String] = []) throws(AnalysisError)
    -> [UInt8]
  {
    try Gzip.compress(encoded(profile, comments: comments))
  }

  /// The profile's serialized message, not compressed; `comments` are shown by pprof's
  /// `-comments`.
  public static func encoded(_ profile: HeapProfile, comments: [String] = []) throws(AnalysisError)
    -> [UInt8]
  {
    do {
      return try message(profile, comments: comments).serializedBytes()
    } catch {
      throw .outputFailed(path: "pprof", "the profile could not be encoded: \(error)")
    }
  }

  static func message(_ profile: HeapProfile, comments: [String]) -> Perftools_Profiles_Profile {
    var tables = PprofTables(runs: profile.runs, style: profile.style)
    var message = Perftools_Profiles_Profile()
    message.sampleType = sampleTypes.map { type, unit in
      var value = Perftools_Profiles_ValueType()
      value.type = tables.string(type)
      value.unit = tables.string(unit)
      return value
    }
    var periodType = Perftools_Profiles_ValueType()
    periodType.type = tables.string("space")
    periodType.unit = tables.string("bytes")
    message.periodType = periodType
    // pprof's period: the bytes between samples, when every run was sampled alike.
    let means = Set(profile.runs.map(\.sampleMeanBytes))
    if means.count == 1, let mean = means.first ?? nil { message.period = Int64(clamping: mean) }
    let categoryKey = tables.string(categoryLabel)
    message.sample = profile.samples.map { sample in
      var encoded = Perftools_Profiles_Sample()
      encoded.locationID = tables.locations(
        of: sample.frames, in: profile.frames, run: sample.run)
      encoded.value = [
        sample.allocatedObjects, sample.allocatedBytes, sample.liveObjects, sample.liveBytes,
      ].map { Int64(clamping: $0) }
      if !sample.category.isEmpty {
        var label = Perftools_Profiles_Label()
        label.key = categoryKey
        label.str = tables.string(sample.category)
        encoded.label = [label]
      }
      return encoded
    }
    // The profile's time is the earliest run's start, and its duration reaches the end of the
    // run that ends last.
    if let first = profile.runs.min(by: { $0.startNanoseconds < $1.startNanoseconds }) {
      let end = profile.runs.map { $0.startNanoseconds &+ $0.durationNanoseconds }.max() ?? 0
      message.timeNanos = Int64(clamping: first.startNanoseconds)
      message.durationNanos = Int64(clamping: end &- first.startNanoseconds)
    }
    message.comment = comments.map { tables.string($0) }
    message.defaultSampleType = tables.string("inuse_space")
    message.mapping = tables.mappings
    message.location = tables.locationTable
    message.function = tables.functions
    message.stringTable = tables.strings
    return message
  }
}
