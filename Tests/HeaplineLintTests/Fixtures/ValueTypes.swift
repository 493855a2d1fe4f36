// In a struct or an enum, self is a value: storing a closure that uses it makes no cycle.
struct ValueTypes {
  var onChange: (() -> Void)?
  var handlers: [() -> Void] = []

  func go() {}

  mutating func wire() {
    let copy = self
    onChange = { copy.go() }
    handlers.append { copy.go() }
  }
}

extension ValueTypes {
  mutating func rewire() { onChange = { [self] in go() } }
}

enum Mode {
  case on
  func make() -> () -> Void { { print(self) } }
}
