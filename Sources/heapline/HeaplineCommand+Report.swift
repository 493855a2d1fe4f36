import ArgumentParser
import HeaplineAnalysis
import HeaplinePprof
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline report`: reads a trace and prints its totals, categories and top stacks.
  struct Report: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Summarize a trace: totals, categories and the top allocation stacks.",
      discussion: """
        Categories are listed as in Object Alloc: persistent blocks are still live at the end \
        of the trace, transient ones were freed. Stacks are ranked by the bytes they held at \
        the moment of the peak of live bytes (--sort for another figure), and --by function \
        merges the stacks whose first user frame is in the same function. Frames are \
        symbolized with llvm-symbolizer (set HEAPLINE_SYMBOLIZER to choose one, or to the \
        empty string for none), whose answers are kept by build ID in ~/.cache/heapline/symbols \
        (HEAPLINE_SYMBOL_CACHE names another directory, or the empty string none). A stack \
        starts at the user's code: the allocator's entry frames, Swift thunks and the frames \
        below main are left out (--all-frames shows them; the JSON keeps them, marked \
        "hidden").

        A trace without a trailer (the program was killed, or is still running) is read up \
        to its last complete chunk, with a warning.
        """)

    /// The output formats, one `ReportRenderer` each.
    enum Format: String, ExpressibleByArgument, CaseIterable {
      case text
      case json
    }

    @Argument(
      help: """
        The trace file to read. Several traces of one program (CI shards, many machines) are \
        reported together: stacks matched by function and file:line, counts and bytes summed, \
        each run's peak given with its trace.
        """)
    var files: [String]

    @Option(
      parsing: .unconditional, help: "The number of allocation stacks (or functions) to show.")
    var top: Int = 10

    @Option(
      parsing: .unconditional,
      help: "The number of categories to list in text; the rest are summed on one line.")
    var categories: Int = 10

    @Option(help: "What ranks the stacks: peak, allocated, count, temporary or leaked.")
    var sort: StackOrder = .peak

    @Option(help: "List allocation stacks (stack), or merge them by function (function).")
    var by: StackGrouping = .stack

    @Option(help: "The output format: text or json.")
    var format: Format = .text

    // `--up-to` was the first name of `--at`; it stays as an alias.
    @Option(
      name: [.customLong("at"), .customLong("up-to")],
      parsing: .unconditional,
      help: ArgumentHelp(
        "Report the statistics as they stood at this instant, in seconds into the trace.",
        valueName: "seconds"))
    var upTo: Double?

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames of the top stacks.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      guard !files.isEmpty else { throw ValidationError("give the trace file to report") }
      if files.count > 1 || files.first.map(MergedProfile.isMerged(path:)) == true,
        format != .text || by != .stack || sort != .peak
      {
        throw ValidationError(
          "several traces, or a merged profile, are reported as text, stacks ranked by bytes"
            + " live; --format json, --by and --sort take one trace")
      }
      guard top >= 0 else { throw ValidationError("--top must be 0 or more, not \(top)") }
      guard categories >= 0 else {
        throw ValidationError("--categories must be 0 or more, not \(categories)")
      }
      try TraceInput.checkSeconds(upTo, option: "--at")
    }

    func run() throws {
      guard files.count == 1, !MergedProfile.isMerged(path: files[0]) else {
        return try reportRuns()
      }
      let file = files[0]
      let reader = try TraceInput.open(file)
      try TraceInput.checkInstant(upTo, option: "--at", in: reader)
      // Merging by function needs every stack: a function's figures are its stacks' sums.
      var options = StatisticsOptions(
        topStackCount: by == .function ? .max : top,
        upTo: upTo.map { .nanoseconds(Int64(TraceInput.instant($0))) })
      options.stackOrder = sort
      let statistics = try Statistics(reader: reader, options: options)
      let symbolizer = try frames.symbolizer(symbolize, traces: [file])
      let report =
        by == .function
        ? StatisticsReport(
          mergingByFunction: statistics, symbolizer: symbolizer, topCount: top, order: sort)
        : StatisticsReport(statistics: statistics, symbolizer: symbolizer)
      switch format {
      case .text:
        let renderer = TextReportRenderer(
          style: frames.style, categoryLimit: categories, order: sort)
        ProgressLine.stop()
        var output = try FileOutput(path: nil, inputs: [file])
        try renderer.write(report, to: &output)
        try output.close()
      case .json:
        // Streamed: with a large --top, the document would be many times the analysis's size.
        ProgressLine.stop()
        var output = try FileOutput(path: nil, inputs: [file])
        try JSONReportRenderer(style: frames.style).write(report, to: &output)
        try output.close()
      }
    }

    /// Several runs of one program, merged by symbol.
    private func reportRuns() throws {
      let profile = try TraceInput.heapProfile(
        of: files, at: upTo, frames: frames, symbolize: symbolize)
      let report = RunsReport(
        profile: profile, top: top, categories: categories, at: upTo.map(TraceInput.instant))
      let text = report.render()
      ProgressLine.stop()
      try CLIOutput.result(text, inputs: files)
    }
  }
}

extension StackOrder: ExpressibleByArgument {}
extension StackGrouping: ExpressibleByArgument {}
