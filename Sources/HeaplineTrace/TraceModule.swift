/// One loaded ELF object, from a MODULE record: where it was mapped, for offline symbolization.
public struct TraceModule: Hashable, Sendable {
  /// A `PT_LOAD` segment, as addresses in the file before the load bias.
  public struct Segment: Hashable, Sendable {
    /// First address of the segment.
    public var start: UInt64
    /// Length in bytes.
    public var size: UInt64

    /// Creates a segment.
    public init(start: UInt64, size: UInt64) {
      self.start = start
      self.size = size
    }
  }

  /// Path of the object as the dynamic loader saw it.
  public var path: String
  /// What the loader added to the file's addresses.
  public var loadBias: UInt64
  /// The loaded segments.
  public var segments: [Segment]
  /// The `NT_GNU_BUILD_ID` note, empty when there is none.
  public var buildID: [UInt8]

  /// Creates a module description.
  public init(path: String, loadBias: UInt64, segments: [Segment], buildID: [UInt8] = []) {
    self.path = path
    self.loadBias = loadBias
    self.segments = segments
    self.buildID = buildID
  }

  /// Whether `pc` lies in one of the module's segments.
  public func contains(_ pc: UInt64) -> Bool {
    let fileAddress = pc &- loadBias
    return segments.contains { segment in
      fileAddress >= segment.start && fileAddress - segment.start < segment.size
    }
  }

  /// The address in the file that `pc` maps to: `pc − bias`.
  public func fileAddress(of pc: UInt64) -> UInt64 { pc &- loadBias }

  /// The last path component, for `module+0x1f0` style names.
  public var name: String {
    path.split(separator: "/").last.map(String.init) ?? path
  }
}
