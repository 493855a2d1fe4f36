import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline timeline`: live memory over time, as CSV.
  struct Timeline: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Write live memory over time as CSV, one row per time step.",
      discussion: """
        Each row is the state at the end of its step (what `heapline report --at` gives for \
        that time) with the allocations, frees and marks made in the step. One extra row ends \
        just after the allocation that reached the peak of live bytes, so the largest \
        live_bytes is the report's peak; the last row ends at the end of the trace and holds \
        the live bytes at exit. The columns are documented in HeaplineAnalysis's TimelineCSV \
        article.
        """)

    /// How rows break live bytes down.
    enum Grouping: String, ExpressibleByArgument, CaseIterable {
      case category
      case total
    }

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The length of a time step.", valueName: "milliseconds"))
    var interval: Double = 100

    @Option(help: "Break live bytes down by category, or show totals only.")
    var by: Grouping = .category

    @Option(
      parsing: .unconditional,
      help: "With --by category, the number of categories with a column of their own.")
    var categories: Int = 10

    @Option(name: .shortAndLong, help: "The CSV file to write (default: standard output).")
    var output: String?

    func validate() throws {
      try TraceInput.checkOutput(output)
      guard interval > 0 && interval < 1e12 else {
        throw ValidationError(
          "--interval must be a positive number of milliseconds, not \(interval)")
      }
      guard interval * 1e6 >= 1 else {
        throw ValidationError("--interval must be at least 1 nanosecond (0.000001 ms)")
      }
      guard categories >= 0 else {
        throw ValidationError("--categories must be 0 or more, not \(categories)")
      }
    }

    func run() throws {
      let reader = try TraceInput.openFull(file, for: "timeline")
      let options = try TimelineOptions(
        intervalNanoseconds: UInt64((interval * 1e6).rounded()),
        grouping: by == .total ? .total : .categories(top: categories))
      var sink = try FileOutput(path: output, inputs: [file])
      try TimelineCSVWriter.write(reader, options: options, to: &sink)
      try sink.close()
    }
  }
}
