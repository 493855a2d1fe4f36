// `heapline-leak-fixture names`: Swift classes whose names the tests know, a given number of
// each, all kept alive to the end and reachable (so the leak check at exit finds nothing).
// Sizes are given in comments: the tests expect them byte for byte.
#if canImport(Glibc)
  import Glibc
#endif

/// 24 bytes: the 16-byte header and one word.
final class Widget { var a = 0 }

enum Outer {
  /// 24 bytes.
  final class Inner { var x = 0 }
}

extension Widget {
  /// 24 bytes; declared in an extension, so its parent context is the extension.
  final class Part { var p = 0 }
}

/// 16 + MemoryLayout<T>.size bytes.
final class Box<T> {
  var value: T
  init(_ value: T) { self.value = value }
}

/// 16 + 16 (String) + 8 = 40 bytes for Pair<String, Outer.Inner>.
final class Pair<A, B> {
  var first: A
  var second: B
  init(_ first: A, _ second: B) {
    self.first = first
    self.second = second
  }
}

enum Node<T> {
  /// 16 + 16 = 32 bytes for Node<Int>.Link<String>: a generic class inside a generic context.
  final class Link<U> {
    var u: U
    init(_ u: U) { self.u = u }
  }
}

class Base<T> {
  var t: T
  init(_ t: T) { self.t = t }
}

/// 16 + 8 (Base<Int>'s t) + 16 = 40 bytes for Sub<String>: its generic arguments follow its
/// superclass's in the metadata.
final class Sub<U>: Base<Int> {
  var u: U
  init(_ u: U) {
    self.u = u
    super.init(1)
  }
}

protocol Shape {}
extension Int: Shape {}

/// 24 bytes; file-private, so the runtime's own name for it holds an address.
private final class Secret { var s = 0 }

nonisolated(unsafe) var keptObjects: [AnyObject] = []
nonisolated(unsafe) var keptArrays: [[Int16]] = []

nonisolated(unsafe) var namePrinters: [() -> Void] = []

/// Keeps `count` objects that `make` returns; `namePrinters` print their type as the runtime
/// names it, and how many there are.
@inline(never) func keep<T: AnyObject>(_ count: Int, _ make: (Int) -> T) {
  for i in 0..<count { keptObjects.append(make(i)) }
  namePrinters.append { print("\(count)\t\(String(reflecting: T.self))") }
}

@inline(never) func makeNamedTypes() {
  // Room for every element in the bytes asked of malloc: the leak scan reads no further, and
  // Array would otherwise put its last elements in malloc's slack (malloc_usable_size).
  keptObjects.reserveCapacity(256)
  keptArrays.reserveCapacity(8)
  keep(10) { _ in Widget() }
  keep(11) { _ in Outer.Inner() }
  keep(12) { _ in Widget.Part() }
  keep(13) { Box($0) }
  keep(14) { _ in Box(Widget()) }  // and 14 more Widgets
  keep(15) { _ in Pair("pair", Outer.Inner()) }  // and 15 more Inners
  keep(16) { _ in Node<Int>.Link("link") }
  keep(17) { _ in Sub("sub") }
  keep(18) { _ in Secret() }
  keep(19) { Box<Int?>($0) }
  keep(20) { Box(($0, name: "tuple")) }
  keep(21) { i in Box<(Int) -> Int>({ $0 + i }) }  // and 21 closure contexts
  keep(22) { _ in Box<Any>(1) }
  keep(23) { _ in Box(InlineArray<3, Int>(repeating: 7)) }  // a value generic argument
  keep(24) { _ in Box<Any.Type>(Int.self) }  // an existential metatype
  keep(25) { _ in Box<any Shape>(1) }  // a protocol existential
  for i in 0..<7 { keptArrays.append([Int16](repeating: Int16(i), count: 100)) }
  // The runtime's names are asked for only now, after time enough for a shim that named types
  // through the runtime (HEAPLINE_SAMPLE_MS=10: every 0.5 s) to fill the runtime's name cache
  // first, from its own thread, untraced: then this program's own allocations for it would
  // go missing from the trace.
  usleep(600_000)
  for printName in namePrinters { printName() }
}
