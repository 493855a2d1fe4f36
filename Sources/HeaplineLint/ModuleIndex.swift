import SwiftSyntax

/// What the lint knows about the whole module before it looks at a closure: which types are
/// values, the stored properties of each type, and which functions store a parameter.
///
/// Types are known by their simple name, and functions by their base name and the position of
/// the stored parameter, whatever their type: the lint reads syntax, not resolved symbols.
struct ModuleIndex {
  private(set) var valueTypes: Set<String> = []
  private var storedProperties: [String: Set<String>] = [:]
  private var superclasses: [String: String] = [:]
  /// Base name → the positions of the parameters that the function stores in its `self`.
  private(set) var storingFunctions: [String: Set<Int>] = [:]

  /// Builds the index of these files, parsed.
  init(_ files: [SourceFileSyntax]) {
    for file in files {
      let declarations = DeclarationCollector(viewMode: .sourceAccurate)
      declarations.walk(file)
      valueTypes.formUnion(declarations.valueTypes)
      superclasses.merge(declarations.superclasses) { first, _ in first }
      storedProperties.merge(declarations.storedProperties) { $0.union($1) }
    }
    // A function that passes its parameter on to a storing function stores it too: repeat
    // until nothing new is found (each round adds at least one position, so this ends).
    var changed = true
    while changed {
      changed = false
      for file in files {
        let collector = StoringFunctionCollector(index: self)
        collector.walk(file)
        for (name, positions) in collector.found
        where !positions.isSubset(of: storingFunctions[name, default: []]) {
          storingFunctions[name, default: []].formUnion(positions)
          changed = true
        }
      }
    }
  }

  /// Whether `name` is a stored instance property of `type` or of one of its superclasses.
  func isStoredProperty(_ name: String, of type: String) -> Bool {
    var current: String? = type
    var seen: Set<String> = []
    while let name0 = current, seen.insert(name0).inserted {
      if storedProperties[name0]?.contains(name) == true { return true }
      current = superclasses[name0]
    }
    return false
  }
}

/// Pass 1: the types, their superclasses and their stored properties that hold strongly.
private final class DeclarationCollector: SyntaxVisitor {
  var valueTypes: Set<String> = []
  var superclasses: [String: String] = [:]
  var storedProperties: [String: Set<String>] = [:]

  override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind {
    if let first = node.inheritanceClause?.inheritedTypes.first {
      superclasses[node.name.text] = first.type.trimmedDescription
    }
    return .visitChildren
  }

  override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind {
    valueTypes.insert(node.name.text)
    return .visitChildren
  }

  override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind {
    valueTypes.insert(node.name.text)
    return .visitChildren
  }

  override func visit(_ node: VariableDeclSyntax) -> SyntaxVisitorContinueKind {
    // A weak or unowned property does not keep what it points to: no cycle goes through it.
    guard !node.isStatic, !node.isWeak, let type = node.memberOfType else { return .skipChildren }
    for binding in node.bindings where binding.isStored {
      if let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text {
        storedProperties[type, default: []].insert(name)
      }
    }
    return .skipChildren
  }
}

/// Pass 2: the functions that store one of their parameters in their `self`.
private final class StoringFunctionCollector: SyntaxVisitor {
  let index: ModuleIndex
  var found: [String: Set<Int>] = [:]

  init(index: ModuleIndex) {
    self.index = index
    super.init(viewMode: .sourceAccurate)
  }

  override func visit(_ node: FunctionDeclSyntax) -> SyntaxVisitorContinueKind {
    guard !node.isStatic, let type = node.memberOfType, let body = node.body else {
      return .visitChildren
    }
    let parameters = node.signature.parameterClause.parameters.map {
      ($0.secondName ?? $0.firstName).text
    }
    let uses = ParameterUses(names: Set(parameters))
    uses.walk(body)
    for use in uses.found {
      guard let position = parameters.firstIndex(of: use.baseName.text),
        StoreSite.find(for: ExprSyntax(use), in: type, index: index) != nil
      else { continue }
      found[node.name.text, default: []].insert(position)
    }
    return .visitChildren
  }
}

/// The references to a function's parameters in its body.
private final class ParameterUses: SyntaxVisitor {
  let names: Set<String>
  var found: [DeclReferenceExprSyntax] = []

  init(names: Set<String>) {
    self.names = names
    super.init(viewMode: .sourceAccurate)
  }

  override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
    if names.contains(node.baseName.text) { found.append(node) }
    return .skipChildren
  }
}
