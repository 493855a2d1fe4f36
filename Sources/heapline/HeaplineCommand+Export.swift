import ArgumentParser
import HeaplineAnalysis
import HeaplinePprof
import HeaplineTrace

#if canImport(Glibc)
  import Glibc
#endif

extension HeaplineCommand {
  /// `heapline export`: the allocation stacks in formats that flame graph tools and profile
  /// servers read.
  struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Export allocation stacks: folded stacks, speedscope, or a pprof heap profile.",
      discussion: """
        folded: one line per stack, frames from the root separated by `;`, a space and the \
        weight in bytes, for flamegraph.pl and inferno-flamegraph. speedscope: a speedscope \
        file with one "sampled" profile per weight (or the one --weight names). The weights \
        of all stacks add up to the report's totals: live bytes at exit, the peak, or bytes \
        allocated. Stacks run from main (or a thread's start) to the user's code: the \
        allocator's and the Swift runtime's frames, thunks and the frames below main are left \
        out (--all-frames keeps them), and stacks that then read the same are merged.

        pprof: a gzipped profile.proto for `go tool pprof`, Grafana Pyroscope or Parca, with \
        the sample types of Go's heap profiles (alloc_objects, alloc_space, inuse_objects, \
        inuse_space; in use means live at the end, or --at), one sample per stack and \
        category, the category as the label `category`, and a mapping per module with its \
        build ID. Several traces of one program (CI shards, many machines) make one profile: \
        stacks match by function and file:line, figures are summed, and the profile's \
        comments give each run's peak.
        """)

    /// The output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
      case folded
      case speedscope
      case pprof
    }

    @Argument(help: "The trace file to read; several for --format pprof.")
    var files: [String]

    @Option(help: "The output format: folded, speedscope or pprof.")
    var format: Format

    @Option(
      help: """
        What weighs a stack: live (bytes live at exit), peak (bytes live at the peak) or \
        allocated (bytes allocated). Default: live for folded, all three for speedscope.
        """)
    var weight: StackWeight?

    @Option(
      name: .customLong("at"),
      parsing: .unconditional,
      help: ArgumentHelp(
        "Export the stacks as they stood at this instant, in seconds into the trace.",
        valueName: "seconds"))
    var at: Double?

    @Option(name: .shortAndLong, help: "The file to write (default: standard output).")
    var output: String?

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      try TraceInput.checkOutput(output)
      guard !files.isEmpty else { throw ValidationError("give the trace file to export") }
      try TraceInput.checkSeconds(at, option: "--at")
      guard format == .pprof else {
        guard files.count == 1 else {
          throw ValidationError(
            "--format \(format.rawValue) takes one trace; --format pprof merges several")
        }
        return
      }
      if weight != nil {
        throw ValidationError("--weight is for folded and speedscope: a pprof profile has all four")
      }
      if output == nil || output == "-", isatty(STDOUT_FILENO) == 1 {
        throw ValidationError(
          "--format pprof writes a binary file, not to a terminal: give -o FILE.pb.gz")
      }
    }

    func run() throws {
      switch format {
      case .folded, .speedscope: try exportStacks()
      case .pprof: try exportPprof()
      }
    }

    private func exportStacks() throws {
      let file = files[0]
      let reader = try TraceInput.open(file)
      try TraceInput.checkInstant(at, option: "--at", in: reader)
      var options = StackProfile.statisticsOptions
      options.endTime = at.map(TraceInput.instant)
      let statistics = try Statistics(reader: reader, options: options)
      let weights = weight.map { [$0] } ?? (format == .folded ? [.live] : StackWeight.allCases)
      let profile = StackProfile(
        statistics: statistics, weights: Set(weights),
        symbolizer: try frames.symbolizer(symbolize, traces: [file]))
      var sink = try FileOutput(path: output, inputs: [file])
      if format == .folded {
        try sink.write(FoldedStacks.render(profile, weight: weights[0], style: frames.style))
      } else {
        let name = String(file.split(separator: "/").last ?? Substring(file))
        try SpeedscopeExport.write(
          profile, weights: weights, name: name, style: frames.style, to: &sink)
      }
      try sink.close()
    }

    private func exportPprof() throws {
      let profile = try TraceInput.heapProfile(
        of: files, at: at, frames: frames, symbolize: symbolize)
      var sink = try FileOutput(path: output, inputs: files)
      try sink.write(bytes: PprofEncoder.gzipped(profile, comments: profile.runComments))
      try sink.close()
    }
  }
}

extension StackWeight: ExpressibleByArgument {}
