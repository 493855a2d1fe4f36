import HeaplineTrace
import Testing

/// SWIFT_TYPE records, written byte for byte as the shim writes them, named by the reader.
@Suite struct SwiftTypeNameTests {
  /// Encodes type-tree nodes as the shim does (TraceFormat.md, "SWIFT_TYPE").
  struct Node {
    var bytes = ByteWriter()

    /// A nominal type: contexts outermost first as (kind, generic parameters, name).
    static func nominal(
      _ descriptor: UInt64, _ contexts: [(UInt8, UInt64, String)], _ arguments: [Node] = []
    ) -> Node {
      var node = Node()
      node.bytes.appendUInt8(1)
      node.bytes.appendVarint(descriptor)
      node.bytes.appendVarint(UInt64(contexts.count))
      for (kind, parameters, name) in contexts {
        node.bytes.appendUInt8(kind)
        node.bytes.appendVarint(parameters)
        node.bytes.appendLengthPrefixed(Array(name.utf8))
      }
      node.bytes.appendVarint(UInt64(arguments.count))
      for argument in arguments { node.bytes.append(argument.bytes.bytes) }
      return node
    }

    static func tuple(labels: String, _ elements: [Node]) -> Node {
      var node = Node()
      node.bytes.appendUInt8(2)
      node.bytes.appendLengthPrefixed(Array(labels.utf8))
      node.bytes.appendVarint(UInt64(elements.count))
      for element in elements { node.bytes.append(element.bytes.bytes) }
      return node
    }

    static func swiftStruct(_ name: String) -> Node {
      nominal(0x7000, [(0, 0, "Swift"), (17, 0, name)])
    }
  }

  static let module = TraceModule(
    path: "/opt/app/bin/app", loadBias: 0x5555_0000_0000,
    segments: [.init(start: 0, size: 0x10_0000)])

  /// The category that one SWIFT_TYPE record for id 0x401 defines.
  func category(of node: Node) throws -> CategoryInfo {
    var writer = TraceWriter()
    var chunk = writer.makeChunk(threadSerial: 0)
    chunk.module(Self.module)
    var record = ByteWriter()
    record.appendUInt8(0x09)
    record.appendVarint(0x401)
    record.append(node.bytes.bytes)
    chunk.appendRaw(record.bytes)
    writer.append(chunk)
    let trace = try TemporaryTrace(writer)
    return try trace.events().metadata.category(CategoryID(0x401))
  }

  @Test func nestedGenericClassesTakeTheArgumentsOfTheirOwnContext() throws {
    // Given Node<Int>.Link<String>: Link's descriptor counts Node's parameter too
    let type = Node.nominal(
      0x5555_0000_1000, [(0, 0, "App"), (18, 1, "Node"), (16, 2, "Link")],
      [.swiftStruct("Int"), .swiftStruct("String")])
    let info = try category(of: type)
    #expect(info.kind == .swiftClass)
    #expect(info.name == "App.Node<Swift.Int>.Link<Swift.String>")
  }

  @Test func privateTypesLeaveOutTheirAnonymousContext() throws {
    let type = Node.nominal(0x5555_0000_1000, [(0, 0, "App"), (2, 0, ""), (16, 0, "Secret")])
    #expect(try category(of: type).name == "App.Secret")
  }

  @Test func aTypeInAnotherModulesExtensionIsNamedAsTheRuntimeNamesIt() throws {
    // Given Parser declared in module Tools, in `extension Lib.Syntax`, and Cache declared in
    // Lib's own extension of Syntax
    let parser = Node.nominal(
      0x5555_0000_1000, [(0, 0, "Lib"), (17, 0, "Syntax"), (1, 0, "Tools"), (16, 0, "Parser")])
    let cache = Node.nominal(
      0x5555_0000_1000, [(0, 0, "Lib"), (17, 0, "Syntax"), (1, 0, "Lib"), (16, 0, "Cache")])
    #expect(try category(of: parser).name == "(extension in Tools):Lib.Syntax.Parser")
    #expect(try category(of: cache).name == "Lib.Syntax.Cache")
  }

  @Test func tupleArgumentsKeepTheirLabels() throws {
    let pair = Node.tuple(labels: " name ", [.swiftStruct("Int"), .swiftStruct("String")])
    let type = Node.nominal(0x5555_0000_1000, [(0, 0, "App"), (16, 1, "Box")], [pair])
    #expect(try category(of: type).name == "App.Box<(Swift.Int, name: Swift.String)>")
  }

  @Test func aTypeWithoutANameIsNamedByItsModuleAndDescriptorOffset() throws {
    // Given a descriptor 0x1a2b0 into the program whose name could not be read
    let type = Node.nominal(0x5555_0001_a2b0, [(0, 0, "App"), (16, 0, "")])
    #expect(try category(of: type).name == "(type descriptor app+0x1a2b0)")
  }

  @Test func aTreeDeeperThanTheShimWritesIsAMalformedRecord() throws {
    var type = Node.swiftStruct("Int")
    for _ in 0..<70 {
      type = Node.nominal(0x5555_0000_1000, [(0, 0, "App"), (16, 1, "Box")], [type])
    }
    #expect(throws: TraceError.self) { try category(of: type) }
  }
}
