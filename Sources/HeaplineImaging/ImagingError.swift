/// What can go wrong when decoding, encoding or storing an image: HeaplineImaging's one error
/// type. Decoders throw it for bad and truncated files instead of crashing, and leave nothing
/// allocated behind.
///
/// ```swift
/// do {
///   let image = try JPEGDecoder().decode(bytes)
/// } catch .truncated(let format, _) {
///   print("the \(format) file is cut short")
/// }
/// ```
public enum ImagingError: Error, Hashable, Sendable, CustomStringConvertible {
  /// The data is not a valid image of the format; the library's message says why.
  case corrupt(format: String, message: String)
  /// The data ends before the image does.
  case truncated(format: String, message: String)
  /// A valid image of a kind these decoders do not handle (a CMYK JPEG, say).
  case unsupported(format: String, message: String)
  /// Width and height must both be at least 1, and the pixels at most
  /// ``PixelBuffer/maximumByteCount``.
  case invalidSize(width: Int, height: Int)
  /// The system refused memory for `bytes`.
  case outOfMemory(bytes: Int)
  /// A file could not be read or written: its path and the errno value.
  case io(path: String, errno: Int32)

  public var description: String {
    switch self {
    case .corrupt(let format, let message): "corrupt \(format) data: \(message)"
    case .truncated(let format, let message): "truncated \(format) data: \(message)"
    case .unsupported(let format, let message): "unsupported \(format) image: \(message)"
    case .invalidSize(let width, let height): "invalid image size \(width)×\(height)"
    case .outOfMemory(let bytes): "out of memory for \(bytes) bytes"
    case .io(let path, let errno): "cannot access '\(path)': errno \(errno)"
    }
  }
}
