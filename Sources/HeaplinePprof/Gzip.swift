import CZlib
import HeaplineAnalysis

/// gzip, as pprof reads its profiles: zlib's deflate with a gzip header and trailer.
enum Gzip {
  /// zlib's window bits (15) plus 16: a gzip wrapper rather than zlib's own.
  private static let gzipWindowBits: Int32 = 15 + 16

  /// `data` compressed into one gzip member.
  static func compress(_ data: [UInt8]) throws(AnalysisError) -> [UInt8] {
    var stream = z_stream()
    let started = deflateInit2_(
      &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, gzipWindowBits, 8, Z_DEFAULT_STRATEGY,
      zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard started == Z_OK else { throw failure(started) }
    defer { deflateEnd(&stream) }
    // deflateBound leaves room for the whole stream, so one call must finish it.
    let capacity = Int(deflateBound(&stream, UInt(data.count)))
    return try finish(&stream, data, capacity: capacity) { deflate(&$0, Z_FINISH) }
  }

  /// The data of one gzip member that decompresses to at most `capacity` bytes: a profile
  /// read back.
  static func decompress(_ data: [UInt8], capacity: Int) throws(AnalysisError) -> [UInt8] {
    var stream = z_stream()
    let started = inflateInit2_(
      &stream, gzipWindowBits, zlibVersion(), Int32(MemoryLayout<z_stream>.size))
    guard started == Z_OK else { throw failure(started) }
    defer { inflateEnd(&stream) }
    return try finish(&stream, data, capacity: capacity) { inflate(&$0, Z_FINISH) }
  }

  /// Runs `step` once over all of `input` into a buffer of `capacity` bytes, which must end
  /// the stream.
  private static func finish(
    _ stream: inout z_stream, _ input: [UInt8], capacity: Int,
    _ step: (inout z_stream) -> Int32
  ) throws(AnalysisError) -> [UInt8] {
    var source = input
    var output = [UInt8](repeating: 0, count: capacity)
    let status = source.withUnsafeMutableBufferPointer { source in
      output.withUnsafeMutableBufferPointer { target in
        stream.next_in = source.baseAddress
        stream.avail_in = UInt32(source.count)
        stream.next_out = target.baseAddress
        stream.avail_out = UInt32(target.count)
        return step(&stream)
      }
    }
    guard status == Z_STREAM_END else { throw failure(status) }
    output.removeLast(output.count - Int(stream.total_out))
    return output
  }

  private static func failure(_ status: Int32) -> AnalysisError {
    .outputFailed(path: "gzip", "zlib failed with status \(status)")
  }
}
