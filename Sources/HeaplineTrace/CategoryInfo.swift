/// A category as the trace defines it: id, kind and display name.
public struct CategoryInfo: Hashable, Sendable {
  /// The id that ALLOC records carry.
  public var id: CategoryID
  /// What the category stands for.
  public var kind: CategoryKind
  /// The display name: `Malloc 48 Bytes`, a Swift type name, a scope name.
  public var name: String

  /// Creates a category description.
  public init(id: CategoryID, kind: CategoryKind, name: String) {
    self.id = id
    self.kind = kind
    self.name = name
  }

  /// The name without its module (`ViewController` for `MyApp.ViewController`), as leak reports
  /// show it; a closure context is `closure context`.
  public var shortName: String {
    if kind == .closureContext { return "closure context" }
    guard kind != .sizeClass, let dot = name.firstIndex(of: ".") else { return name }
    let module = name[..<dot]
    return module.contains { "<( ,".contains($0) } ? name : String(name[name.index(after: dot)...])
  }

  /// The description of a size-class id, which needs no record.
  public init(sizeClass id: CategoryID) {
    self.init(id: id, kind: .sizeClass, name: id.sizeClass?.name ?? "Category \(id.rawValue)")
  }
}
