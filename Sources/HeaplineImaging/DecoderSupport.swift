import CHeapline
import CHeaplineImaging

#if canImport(Glibc)
  import Glibc
#endif

/// What the decoders share: a named Heapline scope around their work, the mapping of the C
/// side's result codes to ``ImagingError``, and reading a whole file.
enum DecoderSupport {
  /// Runs `body` with `name` as the category of everything this thread mallocs meanwhile, so a
  /// decoder's transient allocations (libjpeg's pools, row buffers) show up under its name.
  /// `body` gets the caller's scope, for ``makeOutput(_:category:callerScope:)``.
  static func inScope<T>(_ name: String, _ body: (_ callerScope: UInt32) throws(ImagingError) -> T)
    throws(ImagingError) -> T
  {
    let callerScope = name.withCString { heapline_scope_push($0) }
    defer { heapline_scope_pop(callerScope) }
    return try body(callerScope)
  }

  /// Makes a decoder's output in the scope its caller had: the image (its 64-byte object, not
  /// only its pixels) belongs to the caller and outlives the decode, so it does not count as
  /// the decoder's memory.
  static func makeOutput(_ size: ImageSize, category: String, callerScope: UInt32)
    throws(ImagingError) -> PixelBuffer
  {
    let decoderScope = "".withCString { heapline_scope_push($0) }  // an empty name only reads
    heapline_scope_pop(callerScope)
    defer { heapline_scope_pop(decoderScope) }
    return try PixelBuffer(width: size.width, height: size.height, category: category)
  }

  /// Throws the error that a C result code stands for.
  static func check(_ code: Int32, format: String, message: @autoclosure () -> String)
    throws(ImagingError)
  {
    switch code {
    case Int32(HLI_OK): return
    case Int32(HLI_TRUNCATED): throw .truncated(format: format, message: message())
    case Int32(HLI_UNSUPPORTED): throw .unsupported(format: format, message: message())
    case Int32(HLI_NO_MEMORY): throw .outOfMemory(bytes: 0)
    default: throw .corrupt(format: format, message: message())
    }
  }

  /// A C string's text.
  static func text(_ message: UnsafePointer<CChar>?) -> String {
    message.map { String(cString: $0) } ?? ""
  }

  /// The whole file at `path`.
  static func contents(of path: String) throws(ImagingError) -> [UInt8] {
    let fd = open(path, O_RDONLY | O_CLOEXEC)
    guard fd >= 0 else { throw .io(path: path, errno: errno) }
    defer { close(fd) }
    var info = stat()
    guard fstat(fd, &info) == 0 else { throw .io(path: path, errno: errno) }
    var bytes = [UInt8](repeating: 0, count: Int(info.st_size))
    var done = 0
    while done < bytes.count {
      let n = bytes.withUnsafeMutableBytes { read(fd, $0.baseAddress! + done, $0.count - done) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { throw .io(path: path, errno: n == 0 ? EIO : errno) }
      done += n
    }
    return bytes
  }

  /// Writes `bytes` to `path`, replacing it.
  static func write(_ bytes: [UInt8], to path: String) throws(ImagingError) {
    let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
    guard fd >= 0 else { throw .io(path: path, errno: errno) }
    defer { close(fd) }
    var done = 0
    while done < bytes.count {
      let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, $0.count - done) }
      if n < 0 && errno == EINTR { continue }
      guard n > 0 else { throw .io(path: path, errno: errno) }
      done += n
    }
  }

  /// The size a decoder produces for an image of `full` size and an optional bound.
  static func targetSize(_ full: ImageSize, maxSize: ImageSize?) throws(ImagingError) -> ImageSize {
    guard let maxSize else { return full }
    guard maxSize.width > 0, maxSize.height > 0 else {
      throw .invalidSize(width: maxSize.width, height: maxSize.height)
    }
    return full.fitting(within: maxSize)
  }
}
