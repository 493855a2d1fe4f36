import Foundation
import HeaplineImaging

/// A page rendered by headless Chromium (Debian's `chromium`), under the harness's deadline:
/// its DOM after the scripts ran, and a screenshot.
enum ChromiumPage {
  static let chromium = "/usr/bin/chromium"
  static let flags = ["--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars"]

  /// The DOM of `page` (with `fragment` after `#`) once its scripts have run.
  static func dom(_ page: String, fragment: String = "") throws -> String {
    let url = URL(fileURLWithPath: page).absoluteString + (fragment.isEmpty ? "" : "#" + fragment)
    let result = try Harness.run(chromium, flags + ["--dump-dom", url], timeout: 120)
    guard result.status == 0, result.stdout.contains("data-ready=\"true\"") else {
      throw HarnessError(
        "chromium did not run the page's scripts (\(result.status)): "
          + result.stderr.suffix(400))
    }
    return result.stdout
  }

  /// A screenshot of `page` in a window of `width` × `height` CSS pixels, written to `png`.
  static func screenshot(_ page: String, to png: String, width: Int, height: Int) throws {
    let result = try Harness.run(
      chromium,
      flags + [
        "--window-size=\(width),\(height)", "--screenshot=\(png)",
        URL(fileURLWithPath: page).absoluteString,
      ], timeout: 120)
    guard result.status == 0, FileManager.default.fileExists(atPath: png) else {
      throw HarnessError(
        "chromium made no screenshot (\(result.status)): "
          + result.stderr.suffix(400))
    }
  }

  /// The size of the PNG at `path`, and how many of its pixels differ from its top-left one
  /// (the page's background).
  static func inkedPixels(_ path: String) throws -> (width: Int, height: Int, inked: Int) {
    let image = try PNGDecoder().decode(contentsOf: path)
    let background = image[x: 0, y: 0]
    var inked = 0
    for y in 0..<image.height {
      for x in 0..<image.width where image[x: x, y: y] != background { inked += 1 }
    }
    return (image.width, image.height, inked)
  }

  /// The text of the element with id `id` in `dom`, its tags dropped and entities decoded.
  static func text(ofID id: String, in dom: String) -> String? {
    guard let start = dom.range(of: "id=\"\(id)\""),
      let open = dom[start.upperBound...].firstIndex(of: ">")
    else { return nil }
    var depth = 1
    var text = ""
    var index = dom.index(after: open)
    while index < dom.endIndex && depth > 0 {
      if dom[index] == "<" {
        let close = dom[index...].firstIndex(of: ">") ?? dom.endIndex
        let tag = dom[index..<close]
        if tag.hasPrefix("</") { depth -= 1 } else if !tag.hasSuffix("/") { depth += 1 }
        index = close < dom.endIndex ? dom.index(after: close) : close
      } else {
        text.append(dom[index])
        index = dom.index(after: index)
      }
    }
    return text.replacingOccurrences(of: "&amp;", with: "&")
      .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">")
  }

  /// The cells of the rows of the table with id `id`, header row first.
  static func table(ofID id: String, in dom: String) -> [[String]] {
    guard let start = dom.range(of: "id=\"\(id)\""),
      let end = dom[start.upperBound...].range(of: "</table>")
    else { return [] }
    let body = String(dom[start.upperBound..<end.lowerBound])
    return body.components(separatedBy: "</tr>").dropLast().map { row in
      // Cells open with "<td" or "<th" then ">" or attributes; "<thead" and "<tbody" do not.
      row.components(separatedBy: "<t").dropFirst().compactMap { piece -> String? in
        guard
          piece.hasPrefix("d>") || piece.hasPrefix("d ") || piece.hasPrefix("h>")
            || piece.hasPrefix("h ")
        else { return nil }
        let inner = piece.components(separatedBy: "</t").first ?? ""
        let text = inner.split(separator: ">", omittingEmptySubsequences: false).last ?? ""
        return text.replacingOccurrences(of: "&amp;", with: "&")
      }
    }
  }
}
