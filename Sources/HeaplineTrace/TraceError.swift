#if canImport(Foundation)
  import Foundation
#endif

/// The one error type of HeaplineTrace: a trace that cannot be opened or read.
///
/// Its description is one line that names the file and the byte offset, ready for
/// `heapline: <description>` on stderr:
///
/// ```
/// corrupt trace 'x.trace': chunk at offset 4096 runs past end of file (needs 65584 bytes, 120 remain)
/// ```
public struct TraceError: Error, Hashable, Sendable, CustomStringConvertible {
  /// What went wrong, with the offsets involved.
  public enum Reason: Hashable, Sendable {
    /// `open(2)` failed; the payload is the system's message.
    case cannotOpen(String)
    /// A read failed at `offset`; the payload is the system's message.
    case readFailed(offset: UInt64, String)
    /// ``TraceWriter`` could not write at `offset`; the payload is the system's message.
    case writeFailed(offset: UInt64, String)
    /// The file has no bytes.
    case emptyFile
    /// The file is shorter than its header.
    case truncatedFileHeader(remaining: UInt64)
    /// The file does not start with `HEAPLINE`.
    case badMagic
    /// The format version is one this reader does not know.
    case unsupportedVersion(UInt16)
    /// The header-size field is not the 48 bytes of versions 2 and 3.
    case badHeaderSize(UInt16)
    /// A chunk header or payload extends past the end of the file.
    case chunkPastEnd(chunk: UInt64, needed: UInt64, remaining: UInt64)
    /// A chunk does not start with `HLCK`.
    case badChunkMagic(chunk: UInt64)
    /// A chunk's kind byte is neither events nor trailer.
    case unknownChunkKind(chunk: UInt64, UInt8)
    /// A chunk's encoding byte is neither raw nor zstd.
    case unknownEncoding(chunk: UInt64, UInt8)
    /// A chunk's lengths contradict each other or the format.
    case badPayloadLength(chunk: UInt64, String)
    /// The stored payload's FNV-1a does not match the chunk header.
    case checksumMismatch(chunk: UInt64)
    /// The zstd frame does not decompress to the raw length.
    case decompressionFailed(chunk: UInt64, String)
    /// A record runs past the end of its chunk's payload.
    case truncatedRecord(RecordLocation)
    /// A record has an unknown tag or an impossible value.
    case malformedRecord(RecordLocation, String)
    /// The payload holds a different number of records than the chunk header says.
    case recordCountMismatch(chunk: UInt64, expected: UInt32, found: UInt64)
    /// Bytes follow the trailer, which must end the file.
    case dataAfterTrailer(trailer: UInt64, extra: UInt64)
    /// The file header's checksum (offset 44) does not match its first 44 bytes.
    case headerChecksumMismatch
    /// A chunk claims more bytes than lie between it and the trailer that ends the file.
    case chunkPastTrailer(chunk: UInt64, needed: UInt64, trailer: UInt64)
    /// A reserved field, or a chunk flag bit this reader does not know, at this file offset, is
    /// not zero.
    case nonzeroReserved(offset: UInt64)
    /// A chunk's time or alloc counter goes back from its thread's previous chunk.
    case chunkOutOfOrder(chunk: UInt64, String)
    /// A chunk's records contradict its header or its thread's next chunk (a chunk between
    /// them is missing, say).
    case chunkMismatch(chunk: UInt64, String)
    /// The chunks do not add up to what the trailer counts.
    case trailerMismatch(trailer: UInt64, String)
  }

  /// Where a record starts: a file offset for raw payloads, an offset into the decompressed
  /// payload for zstd ones, where no file offset exists.
  public struct RecordLocation: Hashable, Sendable {
    /// Offset of the record's tag byte.
    public var offset: UInt64
    /// Whether ``offset`` counts from the start of the decompressed payload.
    public var isInDecompressedPayload: Bool
    /// Offset of the chunk header.
    public var chunk: UInt64

    /// Creates a record location.
    public init(offset: UInt64, isInDecompressedPayload: Bool, chunk: UInt64) {
      self.offset = offset
      self.isInDecompressedPayload = isInDecompressedPayload
      self.chunk = chunk
    }
  }

  /// The trace file's path, as given to the reader.
  public var path: String
  /// What went wrong.
  public var reason: Reason

  /// Creates an error about the trace at `path`.
  public init(path: String, reason: Reason) {
    self.path = path
    self.reason = reason
  }

  /// The file offset the error is about: the chunk's offset for chunk and record errors.
  public var offset: UInt64? {
    switch reason {
    case .cannotOpen: nil
    case .readFailed(let offset, _), .writeFailed(let offset, _): offset
    case .emptyFile, .truncatedFileHeader, .badMagic: 0
    case .unsupportedVersion: 8
    case .badHeaderSize: 10
    case .chunkPastEnd(let chunk, _, _), .badChunkMagic(let chunk), .unknownChunkKind(let chunk, _),
      .unknownEncoding(let chunk, _), .badPayloadLength(let chunk, _),
      .checksumMismatch(let chunk), .decompressionFailed(let chunk, _),
      .recordCountMismatch(let chunk, _, _):
      chunk
    case .truncatedRecord(let location), .malformedRecord(let location, _): location.chunk
    case .dataAfterTrailer(let trailer, _), .trailerMismatch(let trailer, _): trailer
    case .headerChecksumMismatch: 44
    case .nonzeroReserved(let offset): offset
    case .chunkPastTrailer(let chunk, _, _), .chunkOutOfOrder(let chunk, _),
      .chunkMismatch(let chunk, _):
      chunk
    }
  }

  public var description: String {
    let file = "'\(path)'"
    switch reason {
    case .cannotOpen(let message):
      return "cannot open trace \(file): \(message)"
    case .readFailed(let offset, let message):
      return "cannot read trace \(file) at offset \(offset): \(message)"
    case .writeFailed(let offset, let message):
      return "cannot write trace \(file) at offset \(offset): \(message)"
    case .unsupportedVersion(let version):
      return "unsupported trace \(file): format version \(version) at offset 8"
        + " (this heapline reads versions \(TraceConstants.oldestReadableVersion) to"
        + " \(TraceConstants.version))"
    default:
      return "corrupt trace \(file): \(corruptionDetail)"
    }
  }

  private var corruptionDetail: String {
    switch reason {
    case .emptyFile:
      return "empty file (no header at offset 0)"
    case .truncatedFileHeader(let remaining):
      return "file header at offset 0 is truncated (needs \(TraceConstants.fileHeaderSize) bytes,"
        + " \(remaining) remain)"
    case .badMagic:
      return "bad magic at offset 0 (not a Heapline trace)"
    case .badHeaderSize(let size):
      return "header size \(size) at offset 10 is not \(TraceConstants.fileHeaderSize)"
    case .chunkPastEnd(let chunk, let needed, let remaining):
      return "chunk at offset \(chunk) runs past end of file (needs \(needed) bytes,"
        + " \(remaining) remain)"
    case .badChunkMagic(let chunk):
      return "bad chunk magic at offset \(chunk)"
    case .unknownChunkKind(let chunk, let kind):
      return "chunk at offset \(chunk) has unknown kind \(kind)"
    case .unknownEncoding(let chunk, let encoding):
      return "chunk at offset \(chunk) has unknown payload encoding \(encoding)"
    case .badPayloadLength(let chunk, let detail):
      return "chunk at offset \(chunk) has a bad payload length (\(detail))"
    case .checksumMismatch(let chunk):
      return "checksum mismatch in chunk at offset \(chunk)"
    case .decompressionFailed(let chunk, let detail):
      return "payload of chunk at offset \(chunk) does not decompress (\(detail))"
    case .truncatedRecord(let location):
      return "\(location.phrase) is truncated"
    case .malformedRecord(let location, let detail):
      return "\(location.phrase) is malformed (\(detail))"
    case .recordCountMismatch(let chunk, let expected, let found):
      return "chunk at offset \(chunk) holds \(found) records but its header says \(expected)"
    case .dataAfterTrailer(let trailer, let extra):
      return "\(extra) bytes follow the trailer at offset \(trailer)"
    case .headerChecksumMismatch:
      return "file header checksum at offset 44 does not match the header"
    case .chunkPastTrailer(let chunk, let needed, let trailer):
      return "chunk at offset \(chunk) needs \(needed) bytes, past the trailer at offset"
        + " \(trailer)"
    case .nonzeroReserved(let offset):
      return "reserved bytes at offset \(offset) are not zero"
    case .chunkOutOfOrder(let chunk, let detail):
      return "chunk at offset \(chunk) is out of order (\(detail))"
    case .chunkMismatch(let chunk, let detail):
      return "chunk at offset \(chunk) \(detail)"
    case .trailerMismatch(let trailer, let detail):
      return "the trailer at offset \(trailer) does not match the chunks (\(detail))"
    case .cannotOpen, .readFailed, .writeFailed, .unsupportedVersion:
      return ""
    }
  }
}

extension TraceError.RecordLocation {
  fileprivate var phrase: String {
    isInDecompressedPayload
      ? "record at offset \(offset) of the decompressed payload of chunk at offset \(chunk)"
      : "record at offset \(offset) in chunk at offset \(chunk)"
  }
}

#if canImport(Foundation)
  extension TraceError: LocalizedError {
    /// The same one line as ``description``.
    public var errorDescription: String? { description }
  }
#endif
