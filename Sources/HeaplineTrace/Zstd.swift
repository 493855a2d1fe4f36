import CZstd
import Synchronization

/// The two zstd calls the format needs, with zstd's error codes turned into messages.
package enum Zstd {
  /// Decompresses the frames of a payload (one, or a side section's and the events') that must
  /// produce exactly `rawLength` bytes together.
  static func decompress(_ frame: [UInt8], rawLength: Int) -> Result<[UInt8], DecodeFailure> {
    // The frames' own sizes are not checked first: zstd writes at most `rawLength` bytes, and
    // what it wrote is checked against the header below.
    // A context per call (what ZSTD_decompress makes) is a fresh allocation of about 100 KiB
    // each chunk, page faults included; contexts are kept and reused instead.
    guard let context = contexts.withLock({ $0.popLast()?.pointer }) ?? ZSTD_createDCtx() else {
      return .failure(DecodeFailure("zstd: out of memory"))
    }
    defer { contexts.withLock { $0.append(Context(pointer: context)) } }
    var result = 0
    let output = [UInt8](unsafeUninitializedCapacity: rawLength) { destination, count in
      result = frame.withUnsafeBytes { source in
        ZSTD_decompressDCtx(
          context, destination.baseAddress, destination.count, source.baseAddress, source.count)
      }
      // Only what zstd wrote is kept; a failure keeps nothing.
      count = ZSTD_isError(result) != 0 ? 0 : result
    }
    if ZSTD_isError(result) != 0 {
      return .failure(DecodeFailure("zstd: " + String(cString: ZSTD_getErrorName(result))))
    }
    guard result == rawLength else {
      return .failure(DecodeFailure("frame holds \(result) bytes, header says \(rawLength)"))
    }
    return .success(output)
  }

  /// The first frame of a payload decompressed, when it records its size (the shim's side
  /// section is a frame of its own); `nil` when it does not or does not decode.
  static func decompressFirstFrame(_ stored: [UInt8]) -> [UInt8]? {
    let (compressed, declared) = stored.withUnsafeBytes {
      (ZSTD_findFrameCompressedSize($0.baseAddress, $0.count),
       ZSTD_getFrameContentSize($0.baseAddress, $0.count))
    }
    guard ZSTD_isError(compressed) == 0, declared < UInt64.max - 1,
      declared <= UInt64(TraceConstants.maximumRawPayloadLength)
    else { return nil }
    guard case .success(let raw) = decompress(Array(stored[0..<compressed]), rawLength: Int(declared))
    else { return nil }
    return raw
  }

  /// Compresses `bytes` into one frame that records its content size.
  package static func compress(_ bytes: [UInt8], level: Int32 = 3) -> [UInt8] {
    var output = [UInt8](repeating: 0, count: ZSTD_compressBound(bytes.count))
    let written = output.withUnsafeMutableBytes { destination in
      bytes.withUnsafeBytes { source in
        ZSTD_compress(
          destination.baseAddress, destination.count, source.baseAddress, source.count, level)
      }
    }
    // Compressing into a buffer of ZSTD_compressBound bytes cannot fail.
    precondition(ZSTD_isError(written) == 0, "ZSTD_compress failed")
    output.removeSubrange(written...)
    return output
  }

  /// Decompression contexts not in use, one per thread that has decompressed at once at most.
  private static let contexts = Mutex<[Context]>([])

  /// A context is used by one thread at a time: the one that took it from ``contexts``.
  private struct Context: @unchecked Sendable {
    let pointer: OpaquePointer
  }

  struct DecodeFailure: Error {
    let message: String
    init(_ message: String) { self.message = message }
  }
}
