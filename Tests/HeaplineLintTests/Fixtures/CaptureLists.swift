// A capture list of other values takes them, not self. [self] and [me = self] take self strongly.
final class CaptureLists {
  var name = "list"
  var model = Model()
  var onChange: (() -> Void)?

  func go() {}

  func wire() {
    onChange = { [model] in model.go() }  // none
    onChange = { [name = self.name] in print(name) }  // none: self.name is read once, here
    onChange = { [me = self] in me.go() }  // warning
    onChange = { [self] in go() }  // warning
  }
}

final class Model {
  func go() {}
}
