/// Names a Swift class offline from a SWIFT_TYPE record: the names of its context descriptors
/// and its generic arguments, which the shim copied as plain memory (see <doc:TraceFormat>).
///
/// The name is the one `String(reflecting:)` gives, less the parts that would hold an address:
/// `Module.Outer.Inner<Swift.Int, Module.Widget>`. Private and local types drop the anonymous
/// context the runtime prints as `(unknown context at $…)`; a type whose name could not be read
/// is named by its module and the descriptor's offset in it, which stays the same between runs.
indirect enum SwiftTypeName: Equatable {
  /// A context descriptor: module, extension, anonymous context, protocol, class, struct, enum.
  struct Context: Equatable {
    var kind: UInt8
    /// Generic parameters of this context, its parents' included.
    var genericParameters: Int
    var name: String
  }

  case nominal(descriptor: UInt64, contexts: [Context], arguments: [SwiftTypeName])
  case tuple(labels: String, elements: [SwiftTypeName])
  case function(flags: UInt64, parameters: [SwiftTypeName], result: SwiftTypeName)
  case existential(isClassBound: Bool, superclass: SwiftTypeName?, protocols: [SwiftTypeName])
  case metatype(SwiftTypeName)
  case other(kind: UInt64)
  case unreadable
  case elided
  /// A value generic argument: the 3 of `InlineArray<3, Int>`.
  case value(Int64)

  /// The shim writes at most 64 nodes, and marks each child it leaves out one level below its
  /// parent (`elided`): 65 levels at most, from depth 0 to 64. A record deeper than this is not
  /// the shim's.
  static let maximumDepth = 64

  /// Reads the record after its tag and makes it a category, named with the modules known so
  /// far (the shim writes the module map before any type).
  static func decode(from cursor: inout ByteCursor, modules: TraceMetadata) throws -> CategoryInfo {
    let id = CategoryID(try cursor.readVarint())
    let type = try decodeNode(from: &cursor, depth: 0)
    return CategoryInfo(id: id, kind: .swiftClass, name: type.name(modules: modules))
  }

  private static func decodeNode(from cursor: inout ByteCursor, depth: Int) throws -> SwiftTypeName
  {
    guard depth <= maximumDepth else {
      throw ChunkCursor.MalformedRecord(detail: "Swift type nested over \(maximumDepth) deep")
    }
    func children(_ count: UInt64) throws -> [SwiftTypeName] {
      guard count <= UInt64(cursor.remaining) else { throw ByteCursor.Failure.truncated }
      return try (0..<count).map { _ in try decodeNode(from: &cursor, depth: depth + 1) }
    }
    let kind = try cursor.readUInt8()
    switch kind {
    case 1:
      let descriptor = try cursor.readVarint()
      let count = try cursor.readVarint()
      guard count <= UInt64(cursor.remaining) else { throw ByteCursor.Failure.truncated }
      let contexts = try (0..<count).map { _ in
        Context(
          kind: try cursor.readUInt8(), genericParameters: Int(clamping: try cursor.readVarint()),
          name: String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self))
      }
      let arguments = try children(try cursor.readVarint())
      return .nominal(descriptor: descriptor, contexts: contexts, arguments: arguments)
    case 2:
      let labels = String(decoding: try cursor.readLengthPrefixedBytes(), as: UTF8.self)
      return .tuple(labels: labels, elements: try children(try cursor.readVarint()))
    case 3:
      let flags = try cursor.readVarint()
      let parameters = try children(try cursor.readVarint())
      return .function(
        flags: flags, parameters: parameters,
        result: try decodeNode(from: &cursor, depth: depth + 1))
    case 4:
      let isClassBound = try cursor.readUInt8() == 0
      let hasSuperclass = try cursor.readUInt8() != 0
      let count = try cursor.readVarint()
      let superclass = hasSuperclass ? try decodeNode(from: &cursor, depth: depth + 1) : nil
      return .existential(
        isClassBound: isClassBound, superclass: superclass, protocols: try children(count))
    case 5: return .metatype(try decodeNode(from: &cursor, depth: depth + 1))
    case 6: return .other(kind: try cursor.readVarint())
    case 7: return .unreadable
    case 8: return .elided
    case 9: return .value(try cursor.readSignedVarint())
    default: throw ChunkCursor.MalformedRecord(detail: "unknown Swift type node \(kind)")
    }
  }
}
