/// Where streaming exporters write their text, piece by piece, so that a CSV of millions of
/// rows never exists in memory as a whole.
///
/// ```swift
/// var output = StringOutput()
/// try TimelineCSVWriter.write(trace, options: options, to: &output)
/// print(output.text)
/// ```
public protocol TextOutput {
  /// Appends `text`.
  mutating func write(_ text: String) throws(AnalysisError)

  /// Appends text that is already UTF-8 bytes; by default, as a `String`. An output that
  /// keeps bytes takes them as they are: the object list hands on a gigabyte this way.
  mutating func write(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(AnalysisError)
}

extension TextOutput {
  public mutating func write(utf8 bytes: UnsafeBufferPointer<UInt8>) throws(AnalysisError) {
    try write(String(decoding: bytes, as: UTF8.self))
  }
}

/// A ``TextOutput`` that keeps everything in a string: for tests and small outputs.
public struct StringOutput: TextOutput {
  /// Everything written so far.
  public var text = ""

  /// An empty output.
  public init() {}

  public mutating func write(_ text: String) throws(AnalysisError) {
    self.text += text
  }
}

/// A ``TextOutput`` that counts what passes through it and keeps nothing: for measuring an
/// export without holding it.
public struct CountingOutput: TextOutput {
  /// Characters written.
  public private(set) var byteCount = 0
  /// Line feeds written.
  public private(set) var lineCount = 0

  /// An empty count.
  public init() {}

  public mutating func write(_ text: String) throws(AnalysisError) {
    byteCount += text.utf8.count
    lineCount += text.utf8.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
  }
}
