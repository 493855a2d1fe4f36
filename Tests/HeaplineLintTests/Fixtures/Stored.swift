// Every way that self keeps a closure which takes self strongly: each is a retain cycle.
final class Stored {
  var onChange: (() -> Void)?
  var handlers: [() -> Void] = []
  var byName: [String: () -> Void] = [:]
  var observers: [() -> Void] = []
  let button = Button()
  var later: Button?

  func go() {}

  func observe(_ observer: @escaping () -> Void) { observers.append(observer) }
  func subscribe(name: String, _ handler: @escaping () -> Void) { observe(handler) }

  func wire() {
    onChange = { self.go() }
    self.onChange = { self.go() }
    handlers.append { self.go() }
    self.handlers.insert({ self.go() }, at: 0)
    handlers += [{ self.go() }]
    byName["go"] = { self.go() }
    observe { self.go() }
    self.observe({ self.go() })
    subscribe(name: "go") { self.go() }
    button.onTap { self.go() }
    later?.onTap { self.go() }
    button.action = { self.go() }
  }
}

final class Button {
  var action: (() -> Void)?
  func onTap(_ action: @escaping () -> Void) { self.action = action }
}

actor Counter {
  var onChange: (() -> Void)?
  func go() {}
  func wire() { onChange = { self.go() } }
}

class Base {
  var onChange: (() -> Void)?
}

final class Derived: Base {
  func go() {}
  func wire() { onChange = { self.go() } }
}

extension Stored {
  func rewire() { onChange = { self.go() } }
}
