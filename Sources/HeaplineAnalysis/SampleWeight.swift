import Foundation

/// How much one sampled allocation stands for, in a trace recorded with `--sample-bytes N`.
///
/// The shim samples an allocation of `size` bytes with probability `p = 1 - exp(-size/N)`
/// (Poisson sampling by bytes), so counting it as `size / p` bytes and `1 / p` allocations makes
/// every per-stack and per-category sum an unbiased estimate of the full trace's.
///
/// ```swift
/// let weight = SampleWeight(meanBytes: 65536)
/// weight.bytes(65536)  // 103_669: a 64 KiB block is sampled 63 % of the time
/// ```
public struct SampleWeight: Hashable, Sendable {
  /// Counts are kept in 1/1024ths, so that weights below 2 (blocks near N and larger) do not
  /// round to a whole allocation each.
  static let countScale: UInt64 = 1024

  /// The mean bytes between samples, N.
  public var meanBytes: UInt64

  /// Weights for sampling with mean `meanBytes`.
  public init(meanBytes: UInt64) { self.meanBytes = meanBytes }

  /// The probability that an allocation of `size` bytes is sampled.
  public func probability(_ size: UInt64) -> Double {
    -expm1(-Double(size) / Double(meanBytes))
  }

  /// The bytes a sampled allocation of `size` bytes stands for, rounded to a byte.
  public func bytes(_ size: UInt64) -> UInt64 {
    size == 0 ? 0 : UInt64((Double(size) / probability(size)).rounded())
  }

  /// The allocations it stands for, in 1/``countScale``ths.
  func scaledCount(_ size: UInt64) -> UInt64 {
    guard size > 0 else { return 0 }  // a zero-byte block is never sampled
    return UInt64((Double(Self.countScale) / probability(size)).rounded())
  }

  /// A count kept in 1/``countScale``ths, rounded to whole allocations.
  static func wholeCount(_ scaled: UInt64) -> UInt64 { (scaled + countScale / 2) / countScale }
}
