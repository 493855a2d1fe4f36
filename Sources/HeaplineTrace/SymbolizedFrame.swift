/// One frame of a symbolized stack: function, source location and module of a return address.
///
/// An address in inlined code yields several frames: the inlined functions first, innermost
/// first, each with ``isInlined`` set, then the function they were inlined into.
public struct SymbolizedFrame: Hashable, Sendable {
  /// The return address in the traced process.
  public var pc: UInt64
  /// The demangled function name, when the symbolizer found one.
  public var function: String?
  /// The source file, when debug info has one.
  public var file: String?
  /// The source line, when debug info has one.
  public var line: Int?
  /// The source column, when debug info has one.
  public var column: Int?
  /// The path of the module that holds ``pc``, when the trace mapped it.
  public var modulePath: String?
  /// `pc − bias`: the return address in the module file.
  public var moduleAddress: UInt64?
  /// Whether this frame was inlined into the frame that follows it.
  public var isInlined: Bool

  /// Creates a frame.
  public init(
    pc: UInt64, function: String? = nil, file: String? = nil, line: Int? = nil,
    column: Int? = nil, modulePath: String? = nil, moduleAddress: UInt64? = nil,
    isInlined: Bool = false
  ) {
    self.pc = pc
    self.function = function
    self.file = file
    self.line = line
    self.column = column
    self.modulePath = modulePath
    self.moduleAddress = moduleAddress
    self.isInlined = isInlined
  }

  /// The module's file name, `libfoo.so`.
  public var moduleName: String? {
    modulePath.map { path in path.split(separator: "/").last.map(String.init) ?? path }
  }

  /// The function name; without one, `module+0x1f0`, or the bare address outside any module.
  public var displayName: String {
    if let function { return function }
    if let moduleName, let moduleAddress {
      return "\(moduleName)+0x\(String(moduleAddress, radix: 16))"
    }
    return "0x" + String(pc, radix: 16)
  }

  /// `file:line`, or the file alone, or `nil` without debug info.
  public var sourceLocation: String? {
    guard let file else { return nil }
    guard let line else { return file }
    return "\(file):\(line)"
  }
}
