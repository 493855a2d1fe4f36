// An inner closure captures through the outer one: the outer's [weak self] covers it, but an
// inner [weak self] alone still makes the outer closure take self strongly.
import Dispatch

final class NestedClosures {
  var onChange: (() -> Void)?

  func go() {}

  func wire() {
    onChange = { [weak self] in DispatchQueue.main.async { self?.go() } }  // none
    onChange = { [weak self] in
      guard let self else { return }
      DispatchQueue.main.async { self.go() }
    }  // none
    onChange = { DispatchQueue.main.async { [weak self] in self?.go() } }  // warning
    onChange = { DispatchQueue.main.async { self.go() } }  // warning
  }
}
