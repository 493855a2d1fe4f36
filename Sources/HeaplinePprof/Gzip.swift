import CZlib
import HeaplineAnalysis

/// gzip, as pprof reads its profiles: zlib's deflate with a gzip header and trailer.
enum Gzip {
  /// `data` compressed into one gzip member.
  static func compress(_ data: [UInt8]) throws(AnalysisError) -> [UInt8] {
    var stream = z_stream()
    // 15 bits of window, plus 16: a gzip wrapper rather than zlib's own.
    let started = deflateInit2_(
      &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY, zlibVersion(),
      Int32(MemoryLayout<z_stream>.size))
    guard started == Z_OK else { throw failure(started) }
    defer { deflateEnd(&stream) }
    var output = [UInt8](repeating: 0, count: Int(deflateBound(&stream, UInt(data.count))))
    var input = data
    let status = input.withUnsafeMutableBufferPointer { source in
      output.withUnsafeMutableBufferPointer { target in
        stream.next_in = source.baseAddress
        stream.avail_in = UInt32(source.count)
        stream.next_out = target.baseAddress
        stream.avail_out = UInt32(target.count)
        return deflate(&stream, Z_FINISH)
      }
    }
    // deflateBound leaves room for the whole stream, so one call must finish it.
    guard status == Z_STREAM_END else { throw failure(status) }
    output.removeLast(output.count - Int(stream.total_out))
    return output
  }

  private static func failure(_ status: Int32) -> AnalysisError {
    .outputFailed(path: "gzip", "zlib failed with status \(status)")
  }
}
