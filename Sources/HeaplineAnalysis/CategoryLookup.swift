import HeaplineTrace

/// The category that a `--category` option names.
enum CategoryLookup {
  /// The full name of the category `requested` names among `categories`: its own name, or the
  /// short name that leak reports show (`ViewController` for `MyApp.ViewController`) when one
  /// category has it.
  ///
  /// - Throws: ``AnalysisError/unknownCategory(_:path:)`` when none has it, and
  ///   ``AnalysisError/invalidOption(_:)`` when several categories have that short name.
  static func fullName(
    _ requested: String, among categories: some Sequence<CategoryInfo>, path: String
  ) throws(AnalysisError) -> String {
    var byShortName: Set<String> = []
    for category in categories {
      if category.name == requested { return requested }
      if category.shortName == requested { byShortName.insert(category.name) }
    }
    guard byShortName.count <= 1 else {
      let names = byShortName.sorted().map { "'\($0)'" }.joined(separator: ", ")
      throw .invalidOption(
        "'\(requested)' is the short name of \(names) in '\(path)': give the full name")
    }
    guard let name = byShortName.first else { throw .unknownCategory(requested, path: path) }
    return name
  }
}
