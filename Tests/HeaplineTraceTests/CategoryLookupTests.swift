import HeaplineTrace
import Testing

@testable import HeaplineAnalysis

/// What a `--category` option names: a full name, or the short name that leak reports show.
@Suite struct CategoryLookupTests {
  static func swiftClass(_ id: UInt64, _ name: String) -> CategoryInfo {
    CategoryInfo(id: CategoryID(id), kind: .swiftClass, name: name)
  }

  static let categories = [
    swiftClass(0x400, "App.Image"), swiftClass(0x401, "App.Cache<Swift.String>"),
    swiftClass(0x402, "App.Node"), swiftClass(0x403, "Kit.Node"),
    CategoryInfo(sizeClass: CategoryID(sizeClassFor: 40)),
  ]

  /// The full name, or the error's description.
  func fullName(_ requested: String) -> String {
    do {
      return try CategoryLookup.fullName(requested, among: Self.categories, path: "t.trace")
    } catch {
      return "error: \(error.description)"
    }
  }

  @Test func aFullNameOrTheOnlyShortNameNamesItsCategory() {
    #expect(fullName("App.Image") == "App.Image")
    #expect(fullName("Image") == "App.Image")
    #expect(fullName("Cache<Swift.String>") == "App.Cache<Swift.String>")
    #expect(fullName("Malloc 48 Bytes") == "Malloc 48 Bytes")
    #expect(fullName("Kit.Node") == "Kit.Node")
  }

  @Test func aShortNameOfTwoCategoriesOrOfNoneIsAnError() {
    #expect(
      fullName("Node")
        == "error: 'Node' is the short name of 'App.Node', 'Kit.Node' in 't.trace': give the full name")
    #expect(fullName("Image2") == "error: no allocation of 't.trace' is in a category named 'Image2'")
  }
}
