import ArgumentParser
import HeaplineAnalysis
import HeaplinePprof
import HeaplineTrace

/// What the analysis subcommands share: opening a trace with its notices, and turning the
/// seconds and milliseconds users type into nanoseconds.
enum TraceInput {
  /// Opens `path` and prints its notices on stderr, one line each: a trace cut short or
  /// without a trailer, lost events, a process that ended before the shim could finish.
  static func open(_ path: String) throws -> TraceReader {
    try refuseMerged(path)
    let reader = try TraceReader(path: path)
    for notice in try reader.notices() { CLIOutput.warning(notice) }
    return reader
  }

  /// Throws when `path` is a merged profile, for a command that takes traces.
  static func refuseMerged(_ path: String) throws {
    guard MergedProfile.isMerged(path: path) else { return }
    throw ValidationError(
      "'\(path)' is a merged profile (heapline merge), which holds no events: heapline report"
        + " and heapline export --format pprof read it; this command takes a trace")
  }

  /// Opens `path` for an analysis that needs every block (`command` names it), which a trace
  /// recorded with `--sample-bytes` does not hold: its figures would be the samples' alone.
  static func openFull(_ path: String, for command: String) throws -> TraceReader {
    let reader = try open(path)
    if let bytes = try reader.sampleMeanBytes() {
      throw ValidationError(
        "\(command) needs every block, and '\(path)' was recorded with --sample-bytes \(bytes):"
          + " use `heapline report` for its exact totals and estimated stacks")
    }
    return reader
  }

  /// Whole nanoseconds in `seconds`, which `validate()` has checked to be from 0 to 1e9.
  static func nanoseconds(seconds: Double) -> UInt64 {
    UInt64((seconds * 1e9).rounded())
  }

  /// Throws when `-o` names no file: an empty name was refused by the file system, each
  /// command in words of its own, with a status of its own.
  static func checkOutput(_ output: String?) throws {
    if output?.isEmpty == true { throw ValidationError("-o needs a file name") }
  }

  /// Throws unless `value` is a number of seconds from 0 to under 1e9 (NaN and infinities
  /// fail).
  static func checkSeconds(_ value: Double?, option: String) throws {
    guard let value else { return }
    guard value >= 0 && value < 1e9 else {
      throw ValidationError(
        "\(option) must be a number of seconds from 0 to under 1e9 (31 years), not \(value)")
    }
  }

  /// Throws unless `seconds` lies within the trace: an instant after its end would report the
  /// end under another name.
  static func checkInstant(_ seconds: Double?, option: String, in reader: TraceReader) throws {
    guard let seconds else { return }
    let end = try reader.endTime()
    guard nanoseconds(seconds: seconds) <= end else {
      throw ValidationError(
        "\(option) \(seconds) s is past the end of trace '\(reader.path)', which is"
          + " \(TimeText.duration(end)) long")
    }
  }
}

extension TraceInput {
  /// The instant that `--at seconds` names, in nanoseconds into the trace: the one
  /// `report --at` reports.
  static func instant(_ seconds: Double) -> UInt64 {
    StatisticsOptions(upTo: .nanoseconds(Int64(seconds * 1e9))).endTime ?? 0
  }

  /// The heap profile of `paths`, merged by symbol when there are several, as they stood
  /// `at` seconds into each (or at their ends).
  static func heapProfile(
    of paths: [String], at seconds: Double?, frames: FrameOptions, symbolize: Bool
  ) throws -> HeapProfile {
    var readers: [Int: TraceReader] = [:]  // by the index of its path
    var profiles = try paths.enumerated().map { index, path in
      if MergedProfile.isMerged(path: path) {
        guard seconds == nil else {
          throw ValidationError(
            "--at takes traces: '\(path)' is a merged profile, which holds its runs' ends")
        }
        return try MergedProfile.read(path: path, style: frames.style)
      }
      let reader = try Self.open(path)
      readers[index] = reader
      try Self.checkInstant(seconds, option: "--at", in: reader)
      let statistics = try Statistics(
        reader: reader, options: HeapProfile.statisticsOptions(endTime: seconds.map(Self.instant)))
      return HeapProfile(
        statistics: statistics, symbolizer: try frames.symbolizer(symbolize, traces: [path]),
        style: frames.style)
    }
    try checkEachRunOnce(profiles, paths: paths)
    if seconds == nil {
      for index in filesCarriedOver(readers) {
        profiles[index].runs[0].totals?.liveBlocks = 0
        profiles[index].runs[0].totals?.liveBytes = 0
        for sample in profiles[index].samples.indices {
          profiles[index].samples[sample].liveObjects = 0
          profiles[index].samples[sample].liveBytes = 0
        }
      }
    }
    return HeapProfile(merging: profiles)
  }

  /// The files whose live blocks a later file of the same rotated recording carries over, by
  /// the index of their paths. Each file of a `record --rotate` recording starts with the blocks
  /// live when it began, so the recording's live blocks are its latest file's alone, not the
  /// files' sum, in whatever order the files are given (a shell's pattern may not sort them):
  /// the files of one recording share its process and start, and a later one covers more.
  private static func filesCarriedOver(_ readers: [Int: TraceReader]) -> [Int] {
    let recordings = Dictionary(grouping: readers) { _, reader in
      RecordingIdentity(pid: reader.header.pid, start: reader.header.startMonotonicNanoseconds)
    }
    return recordings.values.flatMap { files -> [Int] in
      guard files.count > 1 else { return [] }
      let latest = files.max { $0.value.endTimeLowerBound < $1.value.endTimeLowerBound }!
      return files.map(\.key).filter { $0 != latest.key }
    }
  }

  private struct RecordingIdentity: Hashable {
    var pid: UInt32
    var start: UInt64
  }

  /// Refuses a run that two inputs hold: the same trace given twice (a shell pattern that
  /// overlaps a name), a copy of it, or a merged file that holds it already. Its figures would
  /// be summed twice, and no set of runs has the totals that would print.
  private static func checkEachRunOnce(_ profiles: [HeapProfile], paths: [String]) throws {
    var holder: [RunIdentity: String] = [:]
    for (profile, path) in zip(profiles, paths) {
      for run in profile.runs {
        let identity = RunIdentity(run)
        if let first = holder[identity] {
          throw ValidationError(
            first == path
              ? "'\(path)' is given twice: each run is counted once, so give it once"
              : "'\(first)' and '\(path)' hold the same run: each run is counted once, so give"
                + " it once")
        }
        holder[identity] = path
      }
    }
  }

  /// What tells one recording's file from another's: when it started, to the nanosecond, and
  /// what it covers (the files of one rotated recording share their start).
  private struct RunIdentity: Hashable {
    var start, duration, peakLiveBytes: UInt64
    var peakTime: UInt64?
    init(_ run: HeapProfile.Run) {
      start = run.startNanoseconds
      duration = run.durationNanoseconds
      peakLiveBytes = run.peakLiveBytes
      peakTime = run.peakTime
    }
  }
}
