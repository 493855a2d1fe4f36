import Glibc

// The Swift runtime's C entry point. llvm-symbolizer leaves Swift names mangled, and the
// runtime that runs this code is the one that knows the current mangling.
@_silgen_name("swift_demangle")
private func _swiftDemangle(
  _ mangledName: UnsafePointer<CChar>?, _ mangledNameLength: Int,
  _ outputBuffer: UnsafeMutablePointer<CChar>?, _ outputBufferSize: UnsafeMutablePointer<Int>?,
  _ flags: UInt32
) -> UnsafeMutablePointer<CChar>?

/// Turns mangled Swift symbol names into readable ones.
///
/// ```swift
/// SwiftDemangler.demangle("$s1t3midyS2iF") // "t.mid(Swift.Int) -> Swift.Int"
/// ```
public enum SwiftDemangler {
  /// The demangled name, or `nil` when `name` is not a mangled Swift name.
  public static func demangle(_ name: String) -> String? {
    // Only Swift manglings ($s, $S, $e, _$s, _T0…) start like this; skip the runtime call for
    // C and C++ names.
    guard name.hasPrefix("$") || name.hasPrefix("_$") || name.hasPrefix("_T") else { return nil }
    let utf8 = Array(name.utf8)
    let result = utf8.withUnsafeBufferPointer { buffer in
      buffer.withMemoryRebound(to: CChar.self) { chars in
        _swiftDemangle(chars.baseAddress, chars.count, nil, nil, 0)
      }
    }
    guard let result else { return nil }
    defer { free(result) }
    return String(cString: result)
  }

  /// The demangled name when `name` is a Swift mangling, else `name` itself.
  public static func demangleIfSwift(_ name: String) -> String {
    demangle(name) ?? name
  }
}
