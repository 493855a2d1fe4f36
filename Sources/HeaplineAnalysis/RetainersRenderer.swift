import HeaplineTrace

/// Writes ``Retainers`` as text or JSON (`heapline retainers --format`).
///
/// The text gives each group of identical paths as the root, then one line per block on the
/// way with the offset of the field that holds the next, then the object's category:
///
/// ```
/// 1 object, 24 bytes:
///   global App.cache+0x0
///   → Swift._DictionaryStorage<Swift.String, App.Image> +0x48
///   → App.Image
/// ```
public struct RetainersRenderer: Sendable {
  /// An output format.
  public enum Format: String, Sendable, CaseIterable {
    case text
    case json
  }

  public var format: Format

  /// A renderer for `format`.
  public init(format: Format) { self.format = format }

  /// The report, ending with a newline.
  public func render(_ report: Retainers) -> String {
    switch format {
    case .text: text(report)
    case .json: json(report).rendered() + "\n"
    }
  }

  /// How a root reads: `global App.cache+0x0`, `stack of thread 1234`.
  public static func describe(_ root: Retainers.Root) -> String {
    let offset = root.offset.map { "+0x" + String($0, radix: 16) } ?? ""
    switch root.kind {
    case .global: return "global \(root.name)\(offset)"
    case .stack: return "stack of \(root.name)"
    case .registers: return "registers of \(root.name) \(offset)"
    case .threadLocal: return "thread-local storage of \(root.name)"
    case .region: return "registered region \(root.name) \(offset)"
    case .mapping: return "mapping \(root.name) \(offset)"
    case .runtime: return "runtime block \(root.name)"
    case .heap: return "untracked heap chunk \(root.name) \(offset)"
    }
  }

  private func text(_ report: Retainers) -> String {
    let objects = report.objects == 1 ? "1 object" : "\(report.objects) objects"
    let paths = report.paths.count == 1 ? "1 path" : "\(report.paths.count) paths"
    var out =
      "Retainers of \(report.category) at scan \(report.scan.id) (\(report.scan.trigger)): "
      + "\(objects), \(ByteCountText.grouped(report.bytes)) bytes, on \(paths)\n"
    if !(report.scan.graph?.isComplete ?? false) {
      out += "Graph INCOMPLETE: the trace ends inside it; some objects may be missing\n"
    }
    if report.unreached > 0 {
      let more = report.unreached == 1 ? "1 more object" : "\(report.unreached) more objects"
      out += "\(more) that no root reaches, lost or possibly lost: `heapline leaks` shows them\n"
    }
    for path in report.paths {
      let count = path.count == 1 ? "1 object" : "\(path.count) objects"
      out += "\n\(count), \(ByteCountText.grouped(path.bytes)) bytes:\n"
      out += "  \(Self.describe(path.root))\n"
      for (index, step) in path.steps.enumerated() {
        if path.stepsLeftOut > 0 && index == Retainers.keptSteps / 2 {
          out += "  → … \(ByteCountText.grouped(UInt64(path.stepsLeftOut))) more steps\n"
        }
        out += "  → \(step.category) +0x\(String(step.offset, radix: 16))\n"
      }
      out += "  → \(report.category)\n"
    }
    return out
  }

  private func json(_ report: Retainers) -> JSONValue {
    .object([
      ("trace", .string(report.path)),
      ("scan", .unsigned(report.scan.id)),
      ("category", .string(report.category)),
      ("objects", .signed(report.objects)),
      ("bytes", .unsigned(report.bytes)),
      ("unreached_objects", .signed(report.unreached)),
      ("complete", .bool(report.scan.graph?.isComplete ?? false)),
      (
        "paths",
        .array(
          report.paths.map { path in
            .object([
              ("count", .signed(path.count)),
              ("bytes", .unsigned(path.bytes)),
              (
                "root",
                .object([
                  ("kind", .string(String(describing: path.root.kind))),
                  ("name", .string(path.root.name)),
                  ("offset", .unsigned(path.root.offset)),
                ])
              ),
              (
                "steps",
                .array(
                  path.steps.map {
                    .object([("category", .string($0.category)), ("offset", .unsigned($0.offset))])
                  })
              ),
              ("steps_left_out", .signed(path.stepsLeftOut)),
            ])
          })
      ),
    ])
  }
}
