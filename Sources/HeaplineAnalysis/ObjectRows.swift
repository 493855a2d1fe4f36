import HeaplineTrace

/// The object list's rows as bytes: the numbers written as digits, and the fields that repeat
/// (a category, a stack's id and first user frame) escaped once and copied after that.
///
/// Each row used to be nine `String`s, escaped one by one and joined; the list of a trace with
/// millions of allocations spent most of its time there.
struct ObjectRows {
  private let metadata: TraceMetadata
  private let topFrames: [UInt64: SymbolizedFrame]
  private let style: FrameStyle
  /// `category,` by category id.
  private var categories: [UInt64: [UInt8]] = [:]
  /// `stack_id,top_frame,top_frame_source` and the line end, by stack id.
  private var stackTails: [UInt64: [UInt8]] = [:]

  init(metadata: TraceMetadata, topFrames: [UInt64: SymbolizedFrame], style: FrameStyle) {
    self.metadata = metadata
    self.topFrames = topFrames
    self.style = style
  }

  /// Appends the row of the allocation numbered `index`, as ``CSV/record(_:)`` would make it.
  mutating func append(
    index: UInt64, _ record: ObjectRecordFile.Record, to text: inout TextBytes
  ) {
    text.append(decimal: index)
    text.append(byte: 0x2C)
    text.append(seconds: record.allocTime)
    text.append(byte: 0x2C)
    if record.freeTime != ObjectRecordFile.Record.notFreed {
      text.append(seconds: record.freeTime)
    }
    text.append(",0x")
    text.append(hex: record.address)
    text.append(byte: 0x2C)
    text.append(decimal: record.size)
    text.append(byte: 0x2C)
    text.append(bytes: category(record.category))
    text.append(bytes: stackTail(record.stack))
  }

  private mutating func category(_ id: UInt64) -> [UInt8] {
    if let known = categories[id] { return known }
    let field = Array((CSV.field(metadata.category(CategoryID(id)).name) + ",").utf8)
    categories[id] = field
    return field
  }

  private mutating func stackTail(_ stack: UInt64) -> [UInt8] {
    if let known = stackTails[stack] { return known }
    let frame = topFrames[stack]
    let fields = [
      String(stack), frame.map(style.name) ?? "", frame.flatMap(style.sourceLocation) ?? "",
    ]
    let tail = Array(CSV.record(fields).utf8)
    stackTails[stack] = tail
    return tail
  }
}
