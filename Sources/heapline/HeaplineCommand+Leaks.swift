import ArgumentParser
import Foundation
import HeaplineAnalysis
import HeaplineTrace

extension LeakReport.Failure: ExpressibleByArgument {}

extension HeaplineCommand {
  /// `heapline leaks`: the blocks a leak scan found lost, grouped into root leaks and cycles.
  struct Leaks: ParsableCommand {
    static let configuration = CommandConfiguration(
      abstract: "Report the leaks that a leak scan found in a trace.",
      discussion: """
        `heapline record` scans the program for leaks when it exits (unless --no-leaks), \
        every --leaks-every SECONDS, and when it gets the signal that --leaks-signal names; \
        programs can also call heapline_check_leaks(). This reports the last \
        complete scan, or the one --scan names.

        Blocks are definitely lost (a leak starts there), indirectly lost (only lost blocks \
        point to them) or possibly lost (the program points only into their middle). Groups \
        are root leaks, leaked cycles (named by their categories, `A → B → A`) and possibly \
        lost blocks, each with the symbolized stacks that allocated the blocks it starts at, \
        from the user's code (--all-frames for the allocator's and runtime's frames too).

        A suppressions file holds lines such as `leak:function=make_cache`, \
        `leak:module=libfoo.so` or `leak:file=vendor/*.c` (`*` and `?` are wildcards); a \
        group is left out when a frame of its stacks matches one. The loader's, the C and \
        C++ runtimes' and the Swift runtime's own blocks are suppressed by default, and \
        counted as such (--no-default-suppressions shows them).

        Exit status: 1 when definitely or indirectly lost blocks remain after suppressions \
        (with --fail-on possibly, possibly lost blocks too), 0 when none do, 2 on bad input.
        """)

    enum Format: String, ExpressibleByArgument, CaseIterable {
      case text
      case json
    }

    @Argument(help: "The trace file to read.")
    var file: String

    @Option(help: "The output format: text or json.")
    var format: Format = .text

    @Option(help: ArgumentHelp("Leave out leaks that these suppressions match.", valueName: "file"))
    var suppressions: String?

    @Option(
      parsing: .unconditional,
      help: ArgumentHelp("The scan to report (1, 2, …); by default the last.", valueName: "n"))
    var scan: UInt64?

    @Flag(
      inversion: .prefixedNo, help: "Leave out the runtimes' own blocks (loader, libc, C++, Swift)."
    )
    var defaultSuppressions = true

    @Option(
      help: ArgumentHelp(
        "Exit with status 1 for definitely or indirectly lost blocks (definitely), or for"
          + " possibly lost ones too (possibly).", valueName: "kind"))
    var failOn: LeakReport.Failure = .definitely

    @Flag(inversion: .prefixedNo, help: "Symbolize the allocation stacks.")
    var symbolize = true

    @OptionGroup var frames: FrameOptions

    func validate() throws {
      if scan == 0 { throw ValidationError("--scan counts from 1") }
    }

    func run() throws {
      var rules = LeakSuppressions()
      if let suppressions {
        guard let data = FileManager.default.contents(atPath: suppressions) else {
          throw ValidationError("cannot read suppressions file '\(suppressions)'")
        }
        rules = try LeakSuppressions(data: data, source: suppressions)
      }
      let reader = try TraceInput.open(file)  // the warning for a trace cut short
      if let bytes = try reader.sampleMeanBytes() {
        throw ValidationError(
          "'\(file)' has no leak scan: it was recorded with --sample-bytes \(bytes), which keeps"
            + " only the sampled blocks, and a scan needs every live block")
      }
      let report = try LeakReport.read(
        path: file, scan: scan, suppressions: rules, defaultSuppressions: defaultSuppressions,
        symbolizer: try frames.symbolizer(symbolize, traces: [file]))
      let renderer: any LeakReportRenderer =
        switch format {
        case .text: LeakTextRenderer(style: frames.style)
        case .json: LeakJSONRenderer(style: frames.style)
        }
      let text = renderer.render(report)
      ProgressLine.stop()
      try CLIOutput.result(text, inputs: [file])
      if report.fails(on: failOn) { throw ExitCode(1) }
    }
  }
}
