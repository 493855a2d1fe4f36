import HeaplineTrace

/// One self-contained HTML page of a trace: a timeline, the categories, call trees and a flame
/// graph, the leaks, the footprint and the memory warnings. Its style and scripts are inline
/// and it loads nothing, so it opens offline in any browser.
///
/// The figures come from the computations behind `report --format json` (embedded as it
/// writes it), `timeline` and `leaks`, aggregated to the bounds of ``HTMLPageOptions``; the
/// embedded data is described in <doc:ViewPage>.
///
/// ```swift
/// var output = try FileOutput(path: "app.html", inputs: ["app.trace"])
/// try HTMLPage.write(TraceReader(path: "app.trace"), symbolizer: Symbolizer(), to: &output)
/// try output.close()
/// ```
public enum HTMLPage {
  /// Writes the page of `reader` to `output`; `nil` for `symbolizer` shows module offsets.
  ///
  /// - Throws: ``AnalysisError/trace(_:)`` when the trace is damaged, and
  ///   ``AnalysisError/outputFailed(path:_:)`` when the output cannot be written.
  public static func write(
    _ reader: TraceReader, options: HTMLPageOptions = HTMLPageOptions(),
    symbolizer: Symbolizer?, to output: inout some TextOutput
  ) throws(AnalysisError) {
    try output.write(try render(reader, options: options, symbolizer: symbolizer))
  }

  /// The page as text.
  public static func render(
    _ reader: TraceReader, options: HTMLPageOptions = HTMLPageOptions(), symbolizer: Symbolizer?
  ) throws(AnalysisError) -> String {
    let data = try HTMLPageData(
      options: options, symbolizer: symbolizer ?? Symbolizer(toolPath: nil)
    ).json(reader: reader)
    return document(title: reader.path, data: data)
  }

  /// The embedded data of a page that ``render(_:options:symbolizer:)`` made, as JSON text.
  public static func embeddedData(of page: String) -> String? {
    guard let start = page.range(of: dataOpening)?.upperBound,
      let end = page[start...].range(of: "</script>")?.lowerBound
    else { return nil }
    return String(page[start..<end])
  }

  private static let dataOpening = "<script type=\"application/json\" id=\"heapline-data\">"

  static func document(title: String, data: String) -> String {
    // Inside a script element only "</" can end it early; JSON allows "<" as \u003c.
    let safeData = data.replacingOccurrences(of: "<", with: "\\u003c")
    return """
      <!doctype html>
      <html lang="en">
      <head>
      <meta charset="utf-8">
      <meta name="viewport" content="width=device-width, initial-scale=1">
      <title>Heapline: \(escaped(title))</title>
      <style>\(HTMLPageStyle.css)</style>
      </head>
      <body>
      \(HTMLPageStyle.body)
      \(dataOpening)\(safeData)</script>
      <script>\(HTMLPageScript.common)\(HTMLPageScript.timeline)\(HTMLPageScript.tables)\(HTMLPageScript.tree)\(HTMLPageScript.main)</script>
      </body>
      </html>

      """
  }

  /// Text made safe for HTML.
  static func escaped(_ text: String) -> String {
    var result = ""
    for character in text {
      switch character {
      case "&": result += "&amp;"
      case "<": result += "&lt;"
      case ">": result += "&gt;"
      case "\"": result += "&quot;"
      default: result.append(character)
      }
    }
    return result
  }

  /// `text`, JSON, without the whitespace between its tokens.
  static func compact(_ text: String) -> String {
    var result: [UInt8] = []
    result.reserveCapacity(text.utf8.count)
    var inString = false
    var escaping = false
    for byte in text.utf8 {
      if inString {
        result.append(byte)
        if escaping {
          escaping = false
        } else if byte == UInt8(ascii: "\\") {
          escaping = true
        } else if byte == UInt8(ascii: "\"") {
          inString = false
        }
      } else if byte == UInt8(ascii: "\"") {
        inString = true
        result.append(byte)
      } else if ![0x20, 0x0A, 0x0D, 0x09].contains(byte) {
        result.append(byte)
      }
    }
    return String(decoding: result, as: UTF8.self)
  }
}
