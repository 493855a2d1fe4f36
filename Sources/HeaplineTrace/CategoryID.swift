/// Names the category of an allocation: a malloc size class, or a category named by a
/// CATEGORY record (Swift class, closure context, scope…).
///
/// ```swift
/// let id = CategoryID(sizeClassFor: 40)   // the 48-byte size class
/// id.sizeClass?.name                       // "Malloc 48 Bytes"
/// ```
public struct CategoryID: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible
{
  /// The id as written in ALLOC and CATEGORY records.
  public var rawValue: UInt64

  /// Wraps a raw category id.
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// Wraps a raw category id.
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }

  /// The size-class category that an allocation of `size` bytes falls in.
  public init(sizeClassFor size: UInt64) {
    self.init(UInt64(SizeClass(containing: size).index))
  }

  /// Whether the id is a size class, which needs no CATEGORY record.
  public var isSizeClass: Bool { rawValue < UInt64(TraceConstants.firstNamedCategory) }

  /// The size class this id stands for, or `nil` for a named category.
  public var sizeClass: SizeClass? {
    isSizeClass ? SizeClass(index: UInt32(truncatingIfNeeded: rawValue)) : nil
  }

  public static func < (lhs: CategoryID, rhs: CategoryID) -> Bool { lhs.rawValue < rhs.rawValue }

  public var description: String { "category \(rawValue)" }
}
