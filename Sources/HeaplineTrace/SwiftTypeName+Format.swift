extension SwiftTypeName {
  /// Context descriptor kinds (swift/ABI/MetadataValues.h) that are part of a qualified name;
  /// an extension (kind 1) carries the name of the module that declared it.
  private static let namedContextKinds: Set<UInt8> = [0, 3, 16, 17, 18]

  /// The display name; `modules` places a descriptor whose name could not be read.
  func name(modules: TraceMetadata) -> String {
    switch self {
    case .nominal(let descriptor, let contexts, let arguments):
      guard let type = contexts.last, Self.namedContextKinds.contains(type.kind), !type.name.isEmpty
      else {
        guard let module = modules.module(containing: descriptor) else {
          return "(type descriptor)"
        }
        let offset = String(module.fileAddress(of: descriptor), radix: 16)
        return "(type descriptor \(module.name)+0x\(offset))"
      }
      return Self.qualifiedName(contexts, arguments.map { $0.name(modules: modules) })
    case .tuple(let labels, let elements):
      // Each label is followed by a space, an empty one too: "a  c " labels the first and third.
      let labelList = labels.split(separator: " ", omittingEmptySubsequences: false)
      let parts = elements.enumerated().map { index, element in
        let label = index < labelList.count ? labelList[index] : ""
        return (label.isEmpty ? "" : label + ": ") + element.name(modules: modules)
      }
      return "(" + parts.joined(separator: ", ") + ")"
    case .function(let flags, let parameters, let result):
      let convention = ["", "@convention(block) ", "@convention(thin) ", "@convention(c) "]
      let index = Int((flags >> 16) & 0xFF)
      var text = index < convention.count ? convention[index] : ""
      text += "(" + parameters.map { $0.name(modules: modules) }.joined(separator: ", ") + ")"
      if flags & 0x2000_0000 != 0 { text += " async" }
      if flags & 0x0100_0000 != 0 { text += " throws" }
      return text + " -> " + result.name(modules: modules)
    case .existential(let isClassBound, let superclass, let protocols):
      let parts = ([superclass].compactMap { $0 } + protocols).map { $0.name(modules: modules) }
      if !parts.isEmpty { return parts.joined(separator: " & ") }
      return isClassBound ? "Swift.AnyObject" : "Any"
    case .metatype(let instance):
      return instance.name(modules: modules) + ".Type"
    case .other(let kind):
      return "(metadata kind 0x\(String(kind, radix: 16)))"
    case .unreadable:
      return "(unreadable type)"
    case .elided:
      return "…"
    case .value(let value):
      return String(value)
    }
  }

  /// `Module.Outer<A>.Inner<B>`: each generic context takes the arguments its parents did not.
  private static func qualifiedName(_ contexts: [Context], _ arguments: [String]) -> String {
    var parts: [String] = []
    var used = 0
    for context in contexts where namedContextKinds.contains(context.kind) {
      var part = context.name
      let end = min(max(context.genericParameters, used), arguments.count)
      if end > used {
        part += "<" + arguments[used..<end].joined(separator: ", ") + ">"
        used = end
      }
      parts.append(part)
    }
    if used < arguments.count, !parts.isEmpty {
      parts[parts.count - 1] += "<" + arguments[used...].joined(separator: ", ") + ">"
    }
    // A type declared in an extension that another module wrote, as the runtime prints it.
    let module = contexts.first { $0.kind == 0 }?.name
    let foreign = contexts.first { $0.kind == 1 && !$0.name.isEmpty && $0.name != module }
    let prefix = foreign.map { "(extension in \($0.name)):" } ?? ""
    return prefix + parts.joined(separator: ".")
  }
}
