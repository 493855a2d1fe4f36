import Glibc

// The Swift runtime's C entry point. llvm-symbolizer leaves Swift names mangled, and the
// runtime that runs this code is the one that knows the current mangling.
@_silgen_name("swift_demangle")
private func _swiftDemangle(
  _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
  _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?,
  _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

// The runtime's backtracer demangles with its simplified UI options (no module names, argument
// labels instead of types: `Foo.bar(_:)`), the form `swift-demangle --simplified` prints. Both
// entry points are exported by libswiftCore on Linux (SPI in swift/Runtime/Backtrace.h).
@_silgen_name("_swift_backtrace_demangle")
private func _swiftBacktraceDemangle(
  _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
  _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?
) -> UnsafeMutablePointer<CChar>?

@_silgen_name("_swift_backtrace_isThunkFunction")
private func _swiftBacktraceIsThunk(_ mangledName: UnsafePointer<CChar>?) -> Bool

/// Turns mangled Swift symbol names into readable ones.
///
/// ```swift
/// SwiftDemangler.demangle("$s1t3midyS2iF")    // "t.mid(Swift.Int) -> Swift.Int"
/// SwiftDemangler.simplified("$s1t3midyS2iF")  // "mid(_:)"
/// ```
public enum SwiftDemangler {
  /// The demangled name, or `nil` when `name` is not a mangled Swift name.
  public static func demangle(_ name: String) -> String? {
    guard isSwiftMangling(name) else { return nil }
    return call(name) { chars, count in _swiftDemangle(chars, count, nil, nil, 0) }
  }

  /// The name as the runtime's simplified demangling gives it, or `nil` when `name` is not a
  /// mangled Swift name.
  public static func simplified(_ name: String) -> String? {
    guard isSwiftMangling(name) else { return nil }
    return call(name) { chars, count in _swiftBacktraceDemangle(chars, count, nil, nil) }
  }

  /// Whether `name` is a thunk the compiler made (reabstraction, protocol witness, `@objc`,
  /// allocating initializer…), as the runtime's backtracer decides when it hides frames.
  public static func isThunk(_ name: String) -> Bool {
    guard isSwiftMangling(name) else { return false }
    return name.withCString { _swiftBacktraceIsThunk($0) }
  }

  /// The demangled name when `name` is a Swift mangling, else `name` itself.
  public static func demangleIfSwift(_ name: String) -> String {
    demangle(name) ?? name
  }

  /// Only Swift manglings ($s, $S, $e, _$s, _T0…) start like this: C and C++ names skip the
  /// runtime calls.
  private static func isSwiftMangling(_ name: String) -> Bool {
    name.hasPrefix("$") || name.hasPrefix("_$") || name.hasPrefix("_T")
  }

  private static func call(
    _ name: String,
    _ demangler: (UnsafePointer<CChar>?, Int) -> UnsafeMutablePointer<CChar>?
  ) -> String? {
    let utf8 = Array(name.utf8)
    let result = utf8.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in demangler(chars.baseAddress, chars.count)
      }
    }
    guard let result else { return nil }
    defer { free(result) }
    return String(cString: result)
  }
}
