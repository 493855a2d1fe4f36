import SwiftSyntax

/// Whether a closure holds `self` strongly once it is made.
enum SelfCapture {
  /// True when the closure's capture list holds `self` strongly (`[self]`, `[s = self]`), or
  /// when its body names `self` and the capture list does not make it weak or unowned.
  ///
  /// A nested closure that names `self` in any way, even as `[weak self]`, makes the outer
  /// closure capture `self` strongly: the outer one must have `self` at hand to make the inner.
  static func isStrong(_ closure: ClosureExprSyntax) -> Bool {
    for item in closure.signature?.capture?.items ?? [] {
      let value = item.initializer?.value
      guard
        (item.initializer == nil && item.name.tokenKind == .keyword(.self)) || value?.isSelf == true
      else { continue }
      if item.specifier == nil { return true }
      if item.initializer == nil { return false }  // [weak self], [unowned self]
    }
    let uses = SelfUses(viewMode: .sourceAccurate)
    uses.walk(closure.statements)
    return uses.found
  }
}

/// Finds `self` in a closure's body, nested closures and local functions included, but not in
/// nested types, where `self` is another value.
private final class SelfUses: SyntaxVisitor {
  var found = false

  override func visit(_ node: DeclReferenceExprSyntax) -> SyntaxVisitorContinueKind {
    if node.baseName.tokenKind == .keyword(.self) { found = true }
    return .skipChildren
  }

  override func visit(_ node: ClosureCaptureSyntax) -> SyntaxVisitorContinueKind {
    if node.initializer == nil && node.name.tokenKind == .keyword(.self) { found = true }
    return .visitChildren
  }

  override func visit(_ node: ClassDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
  override func visit(_ node: StructDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
  override func visit(_ node: EnumDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
  override func visit(_ node: ActorDeclSyntax) -> SyntaxVisitorContinueKind { .skipChildren }
}
