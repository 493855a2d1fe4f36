import SwiftSyntax

/// Pass 3: the closures, in instance members of classes and actors, that capture `self`
/// strongly and go where `self` keeps them.
final class RetainCycleFinder: SyntaxVisitor {
  private let index: ModuleIndex
  private let file: String
  private let converter: SourceLocationConverter
  private(set) var findings: [LintFinding] = []

  init(file: String, tree: SourceFileSyntax, index: ModuleIndex) {
    self.index = index
    self.file = file
    self.converter = SourceLocationConverter(fileName: file, tree: tree)
    super.init(viewMode: .sourceAccurate)
  }

  override func visit(_ node: ClosureExprSyntax) -> SyntaxVisitorContinueKind {
    guard let type = referenceType(around: Syntax(node)), SelfCapture.isStrong(node),
      let site = StoreSite.find(for: ExprSyntax(node), in: type, index: index)
    else { return .visitChildren }
    let location = node.startLocation(converter: converter)
    findings.append(
      LintFinding(
        file: file, line: location.line, column: location.column, kind: site.kind,
        target: site.target))
    return .visitChildren
  }

  /// The class or actor (or extension of one) whose instance member holds `node`; nil in a
  /// struct or enum, where `self` is a value and makes no cycle, in a protocol, and in static
  /// members, where `self` is the type.
  private func referenceType(around node: Syntax) -> String? {
    var current = node.parent
    while let ancestor = current {
      if ancestor.as(FunctionDeclSyntax.self)?.isStatic == true
        || ancestor.as(VariableDeclSyntax.self)?.isStatic == true
        || ancestor.is(ProtocolDeclSyntax.self)
      {
        return nil
      }
      if let name = ancestor.declaredTypeName {
        let isValue =
          ancestor.is(StructDeclSyntax.self) || ancestor.is(EnumDeclSyntax.self)
          || index.valueTypes.contains(name)
        return isValue ? nil : name
      }
      current = ancestor.parent
    }
    return nil
  }
}
