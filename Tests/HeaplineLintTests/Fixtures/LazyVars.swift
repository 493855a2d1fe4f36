// A lazy var's closure is stored in self; one that is called at once is not.
final class LazyVars {
  var count = 1

  func go() {}

  lazy var run: () -> Void = { self.go() }  // warning
  lazy var total: Int = { self.count * 2 }()  // none
  lazy var safe: () -> Void = { [weak self] in self?.go() }  // none
}
