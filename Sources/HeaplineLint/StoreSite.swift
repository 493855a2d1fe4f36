import SwiftSyntax

/// Where an expression's value goes when `self` keeps it: a stored property, a collection that
/// `self` owns, a parameter that a function of the module stores, or a `lazy var`.
struct StoreSite: Equatable {
  var kind: LintFinding.Kind
  var target: String

  /// The place that keeps `value` inside an instance member of `type`, or nil if nothing of
  /// `self`'s keeps it (a local, a call that does not store, a value returned).
  static func find(for value: ExprSyntax, in type: String, index: ModuleIndex) -> StoreSite? {
    guard let parent = value.parent else { return nil }
    if parent.is(ExprListSyntax.self), let sequence = parent.parent?.as(SequenceExprSyntax.self) {
      return assignment(sequence, of: value, in: type, index: index)
    }
    if let element = parent.as(ArrayElementSyntax.self),
      let array = element.parent?.parent?.as(ArrayExprSyntax.self)
    {
      // `handlers += [closure]`, `handlers.append(contentsOf: [closure])`
      guard let site = find(for: ExprSyntax(array), in: type, index: index),
        site.kind == .collection
      else { return nil }
      return site
    }
    if let initializer = parent.as(InitializerClauseSyntax.self),
      let binding = initializer.parent?.as(PatternBindingSyntax.self),
      let variable = binding.parent?.parent?.as(VariableDeclSyntax.self), variable.isLazy,
      variable.memberOfType != nil,
      let name = binding.pattern.as(IdentifierPatternSyntax.self)?.identifier.text
    {
      return StoreSite(kind: .lazy, target: name)
    }
    if let (call, position) = argumentPosition(of: value, parent: parent) {
      return argument(call, position: position, in: type, index: index)
    }
    return nil
  }

  /// `target = value`, `target[key] = value` and `target += value`.
  private static func assignment(
    _ sequence: SequenceExprSyntax, of value: ExprSyntax, in type: String, index: ModuleIndex
  ) -> StoreSite? {
    let elements = Array(sequence.elements)
    guard elements.count == 3, elements[2].id == value.id else { return nil }
    let isAssign = elements[1].is(AssignmentExprSyntax.self)
    let isAppend = elements[1].as(BinaryOperatorExprSyntax.self)?.operator.text == "+="
    if isAssign, let name = storedProperty(elements[0], in: type, index: index) {
      return StoreSite(kind: .property, target: name)
    }
    // `button.action = value`: an object that self keeps now keeps the value.
    if isAssign, let member = elements[0].as(MemberAccessExprSyntax.self),
      let base = member.base, !base.isSelf,
      let owner = storedProperty(base, in: type, index: index)
    {
      return StoreSite(kind: .property, target: "\(owner).\(member.declName.baseName.text)")
    }
    if isAssign, let subscriptCall = elements[0].as(SubscriptCallExprSyntax.self),
      let name = storedProperty(subscriptCall.calledExpression, in: type, index: index)
    {
      return StoreSite(kind: .collection, target: name)
    }
    if isAppend, let name = storedProperty(elements[0], in: type, index: index) {
      return StoreSite(kind: .collection, target: name)
    }
    return nil
  }

  /// The call that takes `value` as an argument, and the argument's position in it (trailing
  /// closures count after the parenthesized arguments).
  private static func argumentPosition(of value: ExprSyntax, parent: Syntax)
    -> (FunctionCallExprSyntax, Int)?
  {
    if let labeled = parent.as(LabeledExprSyntax.self),
      let list = labeled.parent?.as(LabeledExprListSyntax.self),
      let call = list.parent?.as(FunctionCallExprSyntax.self),
      let position = list.firstIndex(where: { $0.id == labeled.id })
    {
      return (call, list.distance(from: list.startIndex, to: position))
    }
    if let call = parent.as(FunctionCallExprSyntax.self), call.trailingClosure?.id == value.id {
      return (call, call.arguments.count)
    }
    if let element = parent.as(MultipleTrailingClosureElementSyntax.self),
      let list = element.parent?.as(MultipleTrailingClosureElementListSyntax.self),
      let call = list.parent?.as(FunctionCallExprSyntax.self),
      let position = list.firstIndex(where: { $0.id == element.id })
    {
      return (call, call.arguments.count + 1 + list.distance(from: list.startIndex, to: position))
    }
    return nil
  }

  /// Collection methods that keep their argument, and the module's own storing functions,
  /// called on `self` or on an object that `self` keeps.
  private static func argument(
    _ call: FunctionCallExprSyntax, position: Int, in type: String, index: ModuleIndex
  ) -> StoreSite? {
    let callee = call.calledExpression
    if let member = callee.as(MemberAccessExprSyntax.self), let base = member.base {
      let name = member.declName.baseName.text
      if base.unwrapped.isSelf {
        return index.storingFunctions[name]?.contains(position) == true
          ? StoreSite(kind: .parameter, target: name) : nil
      }
      guard let owner = storedProperty(base.unwrapped, in: type, index: index) else { return nil }
      if ["append", "insert", "updateValue"].contains(name) {
        return StoreSite(kind: .collection, target: owner)
      }
      return index.storingFunctions[name]?.contains(position) == true
        ? StoreSite(kind: .parameter, target: "\(owner).\(name)") : nil
    }
    if let reference = callee.as(DeclReferenceExprSyntax.self),
      index.storingFunctions[reference.baseName.text]?.contains(position) == true
    {
      return StoreSite(kind: .parameter, target: reference.baseName.text)
    }
    return nil
  }

  /// The name of the stored property of `self` that `expression` names (`self.name` or `name`).
  static func storedProperty(_ expression: ExprSyntax, in type: String, index: ModuleIndex)
    -> String?
  {
    let expression = expression.unwrapped
    if let reference = expression.as(DeclReferenceExprSyntax.self),
      index.isStoredProperty(reference.baseName.text, of: type)
    {
      return reference.baseName.text
    }
    if let member = expression.as(MemberAccessExprSyntax.self), let base = member.base,
      base.isSelf, index.isStoredProperty(member.declName.baseName.text, of: type)
    {
      return member.declName.baseName.text
    }
    return nil
  }
}
