import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline export`: the allocation stacks in formats that flame graph tools read.
  struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Export allocation stacks for flame graphs: folded stacks or speedscope.",
      discussion: """
        folded: one line per stack, frames from the root separated by `;`, a space and the \
        weight in bytes, for flamegraph.pl and inferno-flamegraph. speedscope: a speedscope \
        file with one "sampled" profile per weight (or the one --weight names). The weights \
        of all stacks add up to the report's totals: live bytes at exit, the peak, or bytes \
        allocated. Stacks run from main (or a thread's start) to the user's code: the \
        allocator's and the Swift runtime's frames, thunks and the frames below main are left \
        out (--all-frames keeps them), and stacks that then read the same are merged.
        """)

    /// The output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
      case folded
      case speedscope
    }

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(help: "The output format: folded or speedscope.")
    var format: Format

    @Option(
      help: """
        What weighs a stack: live (bytes live at exit), peak (bytes live at the peak) or \
        allocated (bytes allocated). Default: live for folded, all three for speedscope.
        """)
    var weight: StackWeight?

    @Option(name: .shortAndLong, help: "The file to write (default: standard output).")
    var output: String?

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func run() throws {
      let reader = try TraceInput.open(file)
      let statistics = try Statistics(reader: reader, options: StackProfile.statisticsOptions)
      let weights = weight.map { [$0] } ?? (format == .folded ? [.live] : StackWeight.allCases)
      let profile = StackProfile(
        statistics: statistics, weights: Set(weights),
        symbolizer: try frames.symbolizer(symbolize, traces: [file]))
      var sink = try FileOutput(path: output, inputs: [file])
      switch format {
      case .folded:
        try sink.write(FoldedStacks.render(profile, weight: weights[0], style: frames.style))
      case .speedscope:
        let name = String(file.split(separator: "/").last ?? Substring(file))
        try sink.write(
          SpeedscopeExport.render(
            profile, weights: weights, name: name, style: frames.style))
      }
      try sink.close()
    }
  }
}

extension StackWeight: ExpressibleByArgument {}
