/// One frame of a symbolized stack: function, source location and module of a return address.
///
/// An address in inlined code yields several frames: the inlined functions first, innermost
/// first, each with ``isInlined`` set, then the function they were inlined into.
public struct SymbolizedFrame: Hashable, Sendable {
  /// The return address in the traced process.
  public var pc: UInt64
  /// The demangled function name in full (module-qualified, with parameter and result types),
  /// when the symbolizer found one.
  public var function: String?
  /// The name as the Swift runtime's simplified demangling gives it (`Foo.bar(_:)`); for C and
  /// C++ names, ``function`` itself.
  public var simplifiedFunction: String?
  /// The name as the symbolizer gave it, before Heapline's demangling: the mangled name of a
  /// Swift function (C++ names come demangled by the symbolizer itself).
  public var systemName: String?
  /// Whether the function is a thunk the Swift compiler made (reabstraction, protocol witness,
  /// allocating initializer): stacks collapse these.
  public var isThunk: Bool = false
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
    modulePath.map { path in path.lastIndex(of: "/").map { String(path[$0...].dropFirst()) } ?? path
    }
  }

  /// The function name in full; without one, `module+0x1f0`, or the bare address outside any
  /// module.
  public var displayName: String { name(fullNames: true) }

  /// The return address the shim writes for the frames it had no room for in its stack table
  /// (TraceFormat.md, "PC"): a stack that ends there lost the frames below.
  public static let lostFramesPC: UInt64 = 1

  /// The simplified name, or the full one with `fullNames`; without a name, `module+0x1f0`,
  /// or the bare address outside any module.
  public func name(fullNames: Bool) -> String {
    if let function { return fullNames ? function : simplifiedFunction ?? function }
    if pc == Self.lostFramesPC { return "(frames lost: the stack table was full)" }
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
