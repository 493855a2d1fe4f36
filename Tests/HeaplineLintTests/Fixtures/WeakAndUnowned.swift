// [weak self] and [unowned self] break the cycle: no finding.
final class WeakAndUnowned {
  var onChange: (() -> Void)?
  var handlers: [() -> Void] = []

  func go() {}

  func wire() {
    onChange = { [weak self] in self?.go() }
    handlers.append { [unowned self] in self.go() }
    self.onChange = { [unowned(unsafe) self] in self.go() }
  }
}
