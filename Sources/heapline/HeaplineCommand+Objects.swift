import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline objects`: every object of a trace, in allocation order, as CSV.
  struct Objects: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "List the objects of a trace in allocation order, as CSV.",
      discussion: """
        One row per allocation: its index in the trace's allocation order, when it was \
        allocated and freed (empty while live), its address, size, category and stack, and \
        the first frame of that stack in the user's code (past the allocator's entry frames \
        and thunks), symbolized. Rows wait in a temporary file until \
        their block's fate is known, so memory holds only the live blocks. The columns are \
        documented in HeaplineAnalysis's ObjectListCSV article.
        """)

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(
      help:
        "Only the objects of the category with this name (`Malloc 48 Bytes`, a type, or a type's name without its module when only one type has it)."
    )
    var category: String?

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "Only the objects live this many seconds into the trace.", valueName: "seconds"))
    var liveAt: Double?

    @Option(name: .shortAndLong, help: "The CSV file to write (default: standard output).")
    var output: String?

    @Flag(inversion: .prefixedNo, help: "Symbolize the first user frame of each stack.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      try TraceInput.checkOutput(output)
      try TraceInput.checkSeconds(liveAt, option: "--live-at")
    }

    func run() throws {
      let reader = try TraceInput.openFull(file, for: "objects")
      try TraceInput.checkInstant(liveAt, option: "--live-at", in: reader)
      let options = ObjectListOptions(
        category: category,
        liveAt: liveAt.map { .nanoseconds(Int64(TraceInput.nanoseconds(seconds: $0))) })
      var sink = try FileOutput(path: output, inputs: [file])
      try ObjectListWriter.write(
        reader, options: options, symbolizer: try frames.symbolizer(symbolize, traces: [file]),
        style: frames.style,
        to: &sink)
      try sink.close()
    }
  }
}
