/// An address in the traced process: a block's start or a return address.
public struct Address: RawRepresentable, Hashable, Comparable, Sendable, CustomStringConvertible,
  ExpressibleByIntegerLiteral
{
  /// The address as an integer.
  public var rawValue: UInt64

  /// Wraps an address.
  public init(rawValue: UInt64) { self.rawValue = rawValue }

  /// Wraps an address.
  public init(_ rawValue: UInt64) { self.rawValue = rawValue }

  /// Allows `let address: Address = 0x1000` in tests.
  public init(integerLiteral value: UInt64) { self.rawValue = value }

  public static func < (lhs: Address, rhs: Address) -> Bool { lhs.rawValue < rhs.rawValue }

  /// The address in hexadecimal, `0x7f…`.
  public var description: String { "0x" + String(rawValue, radix: 16) }
}
