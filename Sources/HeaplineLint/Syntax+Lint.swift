import SwiftSyntax

extension DeclModifierListSyntax {
  var isStatic: Bool {
    contains { $0.name.tokenKind == .keyword(.static) || $0.name.tokenKind == .keyword(.class) }
  }
}

extension VariableDeclSyntax {
  var isStatic: Bool { modifiers.isStatic }
  var isLazy: Bool { modifiers.contains { $0.name.tokenKind == .keyword(.lazy) } }
  var isWeak: Bool {
    modifiers.contains {
      $0.name.tokenKind == .keyword(.weak) || $0.name.tokenKind == .keyword(.unowned)
    }
  }
  /// The type whose member this declaration is, or nil for a local or global one.
  var memberOfType: String? { Syntax(self).memberOfType }
}

extension FunctionDeclSyntax {
  var isStatic: Bool { modifiers.isStatic }
  var memberOfType: String? { Syntax(self).memberOfType }
}

extension PatternBindingSyntax {
  /// A binding with storage: no accessors, or only the observers `willSet` and `didSet`.
  var isStored: Bool {
    guard let block = accessorBlock else { return true }
    guard case .accessors(let accessors) = block.accessors else { return false }
    return accessors.allSatisfy {
      $0.accessorSpecifier.tokenKind == .keyword(.willSet)
        || $0.accessorSpecifier.tokenKind == .keyword(.didSet)
    }
  }
}

extension Syntax {
  /// The name of the type (or extended type) whose member block holds this declaration.
  var memberOfType: String? {
    guard parent?.is(MemberBlockItemSyntax.self) == true,
      let group = parent?.parent?.parent?.parent
    else { return nil }
    return group.declaredTypeName
  }

  /// The simple name of the type that a type or extension declaration declares or extends.
  var declaredTypeName: String? {
    if let decl = self.as(ClassDeclSyntax.self) { return decl.name.text }
    if let decl = self.as(ActorDeclSyntax.self) { return decl.name.text }
    if let decl = self.as(StructDeclSyntax.self) { return decl.name.text }
    if let decl = self.as(EnumDeclSyntax.self) { return decl.name.text }
    if let decl = self.as(ExtensionDeclSyntax.self) {
      let full = decl.extendedType.trimmedDescription
      let withoutGenerics = full.split(separator: "<").first.map(String.init) ?? full
      return withoutGenerics.split(separator: ".").last.map(String.init)
    }
    return nil
  }
}

extension ExprSyntax {
  /// Whether this is the expression `self`.
  var isSelf: Bool { self.as(DeclReferenceExprSyntax.self)?.baseName.tokenKind == .keyword(.self) }

  /// The expression without `?` and `!` after it.
  var unwrapped: ExprSyntax {
    if let chain = self.as(OptionalChainingExprSyntax.self) { return chain.expression.unwrapped }
    if let force = self.as(ForceUnwrapExprSyntax.self) { return force.expression.unwrapped }
    return self
  }
}
