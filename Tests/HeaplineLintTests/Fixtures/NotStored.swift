// Closures that run and are let go, or kept by no one that self keeps: no finding.
import Dispatch

final class NotStored {
  var items: [Int] = []
  var total = 0
  weak var delegate: Button?
  unowned let owner: Button

  init(owner: Button) { self.owner = owner }

  func go() {}
  func double(_ value: Int) -> Int { value * 2 }

  func wire() {
    Task { self.go() }
    DispatchQueue.main.async { self.go() }
    total = items.map { self.double($0) }.reduce(0, +)
    _ = self.items.map { self.double($0) }
    let local = { self.go() }
    local()
    let button = Button()
    button.onTap { self.go() }  // a local button: self does not keep it
    delegate?.onTap { self.go() }  // a weak property does not keep the button
    owner.action = { self.go() }  // nor does an unowned one
  }

  static var shared: (() -> Void)?
  static func install() { shared = { print(self) } }  // self is the type
}

final class Button {
  var action: (() -> Void)?
  func onTap(_ action: @escaping () -> Void) { self.action = action }
}
