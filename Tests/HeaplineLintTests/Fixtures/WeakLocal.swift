// A stored closure that reaches self only through a weak local holds self weakly.
final class WeakLocal {
  var onChange: (() -> Void)?

  func go() {}

  func wire() {
    weak var weakSelf = self
    onChange = { weakSelf?.go() }
    onChange = {
      guard let strong = weakSelf else { return }
      strong.go()
    }
  }
}
