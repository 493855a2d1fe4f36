import ArgumentParser
import HeaplineAnalysis
import HeaplineTrace

extension RetainersRenderer.Format: ExpressibleByArgument {}

extension HeaplineCommand {
  /// `heapline retainers`: what keeps a category's live objects alive.
  struct Retainers: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Show what keeps the live objects of a category alive.",
      discussion: """
        For each live object of the category at a leak scan recorded with `heapline record \
        --graph` (the last one by default), the shortest path of pointers from a root: a \
        global (named by its symbol), a thread's stack, registers or TLS, or a registered \
        region, then each block on the way, by its class or category and the offset of the \
        field that holds the next. Identical paths are grouped and counted, most objects \
        first.

        Exit status: 0; 1 when the trace has no scan with a graph, no such scan or no such \
        category; 2 when the trace cannot be read; 64 for a bad option.
        """)

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(
      help: ArgumentHelp(
        "The category of the objects (a class: MyApp.Image, or Image when only one class has that name).",
        valueName: "name"))
    var category: String

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp(
        "The scan to read (1, 2, …); by default the last one with a graph.", valueName: "n"))
    var scan: UInt64?

    @Option(help: "The output format: text or json.")
    var format: RetainersRenderer.Format = .text

    @Flag(inversion: .prefixedNo, help: "Name globals by their symbols.")
    var symbolize = true

    func validate() throws {
      if scan == 0 { throw ValidationError("--scan counts from 1") }
      if category.isEmpty { throw ValidationError("--category needs a name") }
    }

    func run() throws {
      _ = try TraceInput.open(file)  // the warning for a trace cut short
      let report: HeaplineAnalysis.Retainers
      do {
        report = try HeaplineAnalysis.Retainers.read(
          path: file, category: category, scan: scan,
          symbolizer: symbolize ? Symbolizer() : nil)
      } catch .trace(let error) {
        throw AnalysisError.trace(error)
      } catch {
        // The trace is fine, but lacks what was asked for.
        CLIOutput.error(error.description)
        throw ExitCode(1)
      }
      ProgressLine.stop()
      try CLIOutput.result(RetainersRenderer(format: format).render(report), inputs: [file])
    }
  }
}
