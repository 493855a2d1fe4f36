/// Renders a report in one output format. Each format is one renderer, so adding a format
/// touches neither the statistics nor the CLI's other formats.
///
/// ```swift
/// let renderer: any ReportRenderer = json ? JSONReportRenderer() : TextReportRenderer()
/// print(try renderer.render(report))
/// ```
public protocol ReportRenderer {
  /// The whole report as text, ending with a newline.
  func render(_ report: StatisticsReport) throws -> String
}
