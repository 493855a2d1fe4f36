import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline diff`: growth between two marks of one trace, or two traces side by side.
  struct Diff: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show growth between two marks of a trace, or compare two traces.",
      discussion: """
        With one trace: what was allocated after mark --from and is still live at mark --to \
        (the abandoned memory of that generation), by category and by stack. A mark is named \
        by its name (the first mark of that name), or start or end. Signal marks are named \
        `signal 1`, `signal 2`…, timer marks `every 1`, `every 2`….

        With two traces A and B: the persistent memory (live at exit) of each, by category \
        and by stack, with B − A, largest change first. Stacks are matched by their \
        symbolized function names, since addresses differ between runs.
        """)

    /// The output formats.
    enum Format: String, ExpressibleByArgument, CaseIterable {
      case text
      case csv
    }

    @Argument(help: "One trace (with --from and --to), or two traces to compare.")
    var files: [String] = []

    @Option(help: ArgumentHelp("The mark the growth starts at.", valueName: "mark"))
    var from: String?

    @Option(help: ArgumentHelp("The mark the growth ends at.", valueName: "mark"))
    var to: String?

    @Option(
      parsing: .unconditional,
      help: "The number of stacks to show (all of them in CSV unless given).")
    var top: Int?

    @Option(help: "The output format: text or csv.")
    var format: Format = .text

    @Option(name: .shortAndLong, help: "The file to write (default: standard output).")
    var output: String?

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      try TraceInput.checkOutput(output)
      guard (1...2).contains(files.count) else {
        throw ValidationError(
          "give one trace with --from and --to, or two traces to compare, not \(files.count)")
      }
      if files.count == 2, from != nil || to != nil {
        throw ValidationError("--from and --to apply to one trace, not to a comparison of two")
      }
      if let top, top < 0 { throw ValidationError("--top must be 0 or more, not \(top)") }
    }

    func run() throws {
      try files.forEach(TraceInput.refuseMerged)
      let symbolizer = try frames.symbolizer(symbolize, traces: files)
      let limit = top ?? (format == .text ? 10 : nil)
      let text: String
      if files.count == 1 {
        let growth = try Growth(
          reader: TraceInput.openFull(files[0], for: "diff --from/--to"),
          from: MarkReference(from ?? "start"),
          to: MarkReference(to ?? "end"))
        let report = GrowthReport(growth: growth, symbolizer: symbolizer, stackLimit: limit)
        text =
          format == .text
          ? report.text(path: files[0], style: frames.style) : report.csv(style: frames.style)
      } else {
        var notes: [String] = []
        let readers = try files.map(TraceInput.open)
        let options = StackProfile.statisticsOptions
        let (a, b) = try bothAtOnce(
          { try Statistics(reader: readers[0], options: options) },
          { [reader = readers[1]] in try Statistics(reader: reader, options: options) })
        let profiles = zip(["A", "B"], [a, b]).map { name, statistics in
          if let weight = statistics.sampleWeight {
            notes.append(
              "\(name) was sampled every \(ByteCountText.grouped(weight.meanBytes)) bytes on"
                + " average (--sample-bytes): its figures are estimates")
          }
          return (
            StackProfile(statistics: statistics, weights: [.live], symbolizer: symbolizer),
            statistics.categories
          )
        }
        // CSV has no place for a note: it goes to stderr.
        if format == .csv { notes.forEach { CLIOutput.note("diff: " + $0) } }
        let comparison = TraceComparison(
          a: profiles[0].0, aCategories: profiles[0].1, b: profiles[1].0,
          bCategories: profiles[1].1, style: frames.style, framesKept: format == .text ? limit : 0)
        text =
          format == .text
          ? comparison.text(
            pathA: files[0], pathB: files[1], stackLimit: limit, style: frames.style,
            notes: notes)
          : comparison.csv()
      }
      var sink = try FileOutput(path: output, inputs: files)
      try sink.write(text)
      try sink.close()
    }
  }
}
