import ArgumentParser
import HeaplineAnalysis
import HeaplinePprof

extension HeaplineCommand {
  /// `heapline merge`: runs of one program as one merged profile file.
  struct Merge: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Merge runs of one program (CI shards, many machines) into one profile file.",
      discussion: """
        Each process loads at its own addresses, so stacks match by symbol: the same \
        functions at the same file and line, with the same category, are one stack whose \
        allocations, bytes allocated, blocks and bytes live at the end are summed. Each run \
        keeps its source and its peak of live bytes, with when it was. The inputs are traces \
        or merged files, so merged files merge again. `heapline report` and `heapline export \
        --format pprof` read the result as they read the runs themselves; it holds no events, \
        so the commands that replay them take the traces.
        """)

    @Argument(help: "The traces or merged files to merge.")
    var files: [String]

    @Option(name: .shortAndLong, help: "The merged file to write.")
    var output: String

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames, so that stacks match by symbol.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      guard !files.isEmpty else { throw ValidationError("give the traces to merge") }
      try TraceInput.checkOutput(output)
    }

    func run() throws {
      let profile = try TraceInput.heapProfile(
        of: files, at: nil, frames: frames, symbolize: symbolize)
      let bytes = try MergedProfile.encoded(profile)
      var sink = try FileOutput(path: output, inputs: files)
      try sink.write(bytes: bytes)
      try sink.close()
      ProgressLine.stop()
      CLIOutput.note(
        "merged \(profile.runs.count) run\(profile.runs.count == 1 ? "" : "s") into '\(output)'")
    }
  }
}
