import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension HeaplineCommand {
  /// `heapline view`: one self-contained HTML page of a trace.
  struct View: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Write one self-contained HTML page of a trace, to open in any browser.",
      discussion: """
        The page shows the timeline (live bytes by category, backing stores and RSS, with \
        marks, memory warnings, leak scans and the peak), the categories as Object Alloc \
        lists them, call trees and a flame graph, the leaks, the footprint and the memory \
        warnings. Its figures are those of `report --format json`, which it embeds. It loads \
        nothing from elsewhere. Long traces are aggregated, so the page stays a few megabytes.
        """)

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(name: .shortAndLong, help: "The HTML file to write (- for standard output).")
    var output: String

    @Flag(inversion: .prefixedNo, help: "Symbolize the frames.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      guard !output.isEmpty else { throw ValidationError("-o must name an HTML file") }
    }

    func run() throws {
      let reader = try TraceInput.openFull(file, for: "view")
      var sink = try FileOutput(path: output, inputs: [file])
      var options = HTMLPageOptions()
      options.frameStyle = frames.style
      try HTMLPage.write(
        reader, options: options, symbolizer: try frames.symbolizer(symbolize, traces: [file]),
        to: &sink)
      ProgressLine.stop()
      try sink.close()
      if output != "-" { CLIOutput.note("wrote \(output)") }
    }
  }
}
