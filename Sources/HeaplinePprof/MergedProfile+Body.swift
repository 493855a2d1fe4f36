import HeaplineAnalysis
import HeaplineTrace

extension MergedProfile.Body {
  /// The body of `profile`, each distinct frame stored once.
  init(_ profile: HeapProfile) {
    version = MergedProfile.version
    runs = profile.runs.map { run in
      Run(
        path: run.path,
        modules: run.modules.map { module in
          Module(
            path: module.path, loadBias: module.loadBias,
            segments: module.segments.map { [$0.start, $0.size] }, buildID: module.buildID)
        },
        start: run.startNanoseconds, duration: run.durationNanoseconds,
        peakLiveBytes: run.peakLiveBytes, peakTime: run.peakTime,
        sampleMeanBytes: run.sampleMeanBytes, totals: run.totals)
    }
    // The profile's table may hold a frame twice (the same one at two places): stored once.
    var frames: [Frame] = []
    var index: [Frame: Int] = [:]
    let numbers = profile.frames.map { symbolized in
      let frame = Frame(symbolized)
      if let known = index[frame] { return known }
      index[frame] = frames.count
      frames.append(frame)
      return frames.count - 1
    }
    samples = profile.samples.map { sample in
      Sample(
        frames: sample.frames.map { numbers[$0] }, category: sample.category,
        allocatedObjects: sample.allocatedObjects, allocatedBytes: sample.allocatedBytes,
        liveObjects: sample.liveObjects, liveBytes: sample.liveBytes, run: sample.run)
    }
    self.frames = frames
  }

  /// The profile it holds; throws when a sample names a frame or a run that is not there.
  func profile(path: String, style: FrameStyle) throws(AnalysisError) -> HeapProfile {
    guard !runs.isEmpty else { throw MergedProfile.damaged(path, "it holds no runs") }
    let symbolized = frames.map(\.symbolized)
    var converted: [HeapProfile.Sample] = []
    for sample in samples {
      guard sample.run >= 0, sample.run < runs.count,
        sample.frames.allSatisfy({ $0 >= 0 && $0 < symbolized.count })
      else { throw MergedProfile.damaged(path, "a sample names a frame or run it does not hold") }
      converted.append(
        HeapProfile.Sample(
          frames: sample.frames, category: sample.category,
          allocatedObjects: sample.allocatedObjects, allocatedBytes: sample.allocatedBytes,
          liveObjects: sample.liveObjects, liveBytes: sample.liveBytes, run: sample.run))
    }
    let converter = runs.map { run in
      HeapProfile.Run(
        path: run.path,
        modules: run.modules.map { module in
          TraceModule(
            path: module.path, loadBias: module.loadBias,
            segments: module.segments.map {
              TraceModule.Segment(start: $0.first ?? 0, size: $0.dropFirst().first ?? 0)
            },
            buildID: module.buildID)
        },
        startNanoseconds: run.start, durationNanoseconds: run.duration,
        peakLiveBytes: run.peakLiveBytes, peakTime: run.peakTime,
        sampleMeanBytes: run.sampleMeanBytes, totals: run.totals)
    }
    return HeapProfile(samples: converted, frames: symbolized, runs: converter, style: style)
  }
}

extension MergedProfile.Body.Frame {
  init(_ frame: SymbolizedFrame) {
    self.init(
      pc: frame.pc, function: frame.function, simplifiedFunction: frame.simplifiedFunction,
      systemName: frame.systemName, isThunk: frame.isThunk, file: frame.file, line: frame.line,
      column: frame.column, modulePath: frame.modulePath, moduleAddress: frame.moduleAddress,
      isInlined: frame.isInlined)
  }

  var symbolized: SymbolizedFrame {
    var frame = SymbolizedFrame(
      pc: pc, function: function, file: file, line: line, column: column,
      modulePath: modulePath, moduleAddress: moduleAddress, isInlined: isInlined)
    frame.simplifiedFunction = simplifiedFunction
    frame.systemName = systemName
    frame.isThunk = isThunk
    return frame
  }
}
