import HeaplineAnalysis
import HeaplineTrace

extension HeapProfile {
  /// The profiles of several runs of one program as one: samples whose frames name the same
  /// functions at the same file and line, with the same category, are one sample whose
  /// figures are the sums. Each process loads at its own addresses, so addresses never match
  /// samples; a merged sample keeps the frames of the first run that had it. Frames without a
  /// function name match only within their run.
  ///
  /// The profiles' styles should agree; the first one's is kept.
  public init(merging profiles: [HeapProfile]) {
    precondition(!profiles.isEmpty, "merging no profiles")
    style = profiles[0].style
    runs = profiles.flatMap(\.runs)
    frames = profiles.flatMap(\.frames)
    var all: [Sample] = []
    var firstRun = 0
    var firstFrame = 0
    for profile in profiles {
      all += profile.samples.map { sample in
        var moved = sample
        moved.run += firstRun
        moved.frames = sample.frames.map { $0 + firstFrame }
        return moved
      }
      firstRun += profile.runs.count
      firstFrame += profile.frames.count
    }
    samples = Self.merged(all, frames: frames)
  }

  /// One sample per stack, whatever the category of its blocks (which is left empty), with
  /// the figures of its categories summed.
  public var stacks: [Sample] {
    Self.merged(
      samples.map { sample in
        var stack = sample
        stack.category = ""
        return stack
      }, frames: frames)
  }

  /// The samples with those that match summed into the first of them.
  private static func merged(_ samples: [Sample], frames: [SymbolizedFrame]) -> [Sample] {
    var result: [Sample] = []
    var index: [SampleKey: Int] = [:]
    var keys = FrameKeys(frames)
    for sample in samples {
      let key = SampleKey(
        category: sample.category, frames: sample.frames.map { keys.id(of: $0, run: sample.run) })
      guard let existing = index[key] else {
        index[key] = result.count
        result.append(sample)
        continue
      }
      result[existing].allocatedObjects &+= sample.allocatedObjects
      result[existing].allocatedBytes &+= sample.allocatedBytes
      result[existing].liveObjects &+= sample.liveObjects
      result[existing].liveBytes &+= sample.liveBytes
    }
    return result
  }

  /// One line per run: its trace, and its peak of live bytes with when it was. A merged
  /// profile has no single peak, since the runs peak at different moments.
  public var runComments: [String] {
    runs.enumerated().map { number, run in
      let when = run.peakTime.map { " at \(TimeText.duration($0))" } ?? ""
      let sampled = run.sampleMeanBytes.map {
        "; sampled every \(ByteCountText.grouped($0)) bytes on average: its figures are estimates"
      }
      return
        "run \(number + 1) of \(runs.count): \(run.path), peak \(ByteCountText.grouped(run.peakLiveBytes)) bytes live"
        + when + (sampled ?? "")
    }
  }

  /// What matches a sample across runs: its category and what matches each of its frames.
  private struct SampleKey: Hashable {
    var category: String
    var frames: [Int]
  }

  /// What matches a frame across runs, numbered: the function, file, line and whether it was
  /// inlined. A frame without a function keeps its run and address. Each frame of the table
  /// gets its number once, not once per sample that holds it.
  private struct FrameKeys {
    private let frames: [SymbolizedFrame]
    private var idOfFrame: [Int?]
    private var ids: [FrameKey: Int] = [:]

    init(_ frames: [SymbolizedFrame]) {
      self.frames = frames
      idOfFrame = Array(repeating: nil, count: frames.count)
    }

    mutating func id(of place: Int, run: Int) -> Int {
      if let known = idOfFrame[place] { return known }
      let frame = frames[place]
      let key = FrameKey(
        function: frame.function, file: frame.file, line: frame.line, isInlined: frame.isInlined,
        address: frame.function == nil ? [UInt64(run), frame.pc] : [])
      let id = ids[key] ?? ids.count
      ids[key] = id
      // An unnamed frame's number depends on the run, so it is not kept for the next sample.
      if frame.function != nil { idOfFrame[place] = id }
      return id
    }
  }

  private struct FrameKey: Hashable {
    var function: String?
    var file: String?
    var line: Int?
    var isInlined: Bool
    var address: [UInt64]
  }
}
