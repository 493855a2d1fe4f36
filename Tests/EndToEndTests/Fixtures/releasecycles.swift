// A Swift program built with -O for the leak-grouping test: one loop leaks three identical
// "ViewController → Store → ViewController" cycles (the closure captures only self, so self is
// its context: no block of its own). The optimizer unrolls the loop, so the three cycles'
// stacks differ only in return addresses in the same functions.
// Sizes: ViewController 40 bytes (header, store, two words), Store 40 (header, the callback's
// two words, one word).
final class Store {
  var onChange: (() -> Void)?
  var version = 0
}

final class ViewController {
  let store = Store()
  var title = 0
  var state = 0

  func bind() {
    store.onChange = { self.title += 1 }
  }
}

for _ in 0..<3 {
  ViewController().bind()
}
