/// What a category stands for: a size class, or one of the kinds a CATEGORY record names.
///
/// A struct rather than an enum so that a kind added by a newer shim still reads.
public struct CategoryKind: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
  /// The kind byte of a CATEGORY record; 0 for size classes, which have no record.
  public var rawValue: UInt8

  /// Wraps a kind byte.
  public init(rawValue: UInt8) { self.rawValue = rawValue }

  /// A malloc size class (no CATEGORY record).
  public static let sizeClass = CategoryKind(rawValue: 0)
  /// A Swift class, named by its type.
  public static let swiftClass = CategoryKind(rawValue: 1)
  /// A Swift closure context.
  public static let closureContext = CategoryKind(rawValue: 2)
  /// A Swift box (captured `var`, indirect enum payload).
  public static let box = CategoryKind(rawValue: 3)
  /// A named scope, `Heapline.category("ImageDecoder") { … }`.
  public static let scope = CategoryKind(rawValue: 4)
  /// Another Swift heap object.
  public static let otherSwiftObject = CategoryKind(rawValue: 5)
  /// Memory outside malloc that code reported, `Heapline.backingStore(allocated:category:id:)`.
  public static let backingStore = CategoryKind(rawValue: 6)

  /// A stable snake_case name, used by the JSON report.
  public var description: String {
    switch rawValue {
    case 0: "size_class"
    case 1: "swift_class"
    case 2: "closure_context"
    case 3: "box"
    case 4: "scope"
    case 5: "swift_object"
    case 6: "backing_store"
    default: "kind_\(rawValue)"
    }
  }
}
