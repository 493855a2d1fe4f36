// Objects of two classes made and dropped at once, on one thread, as a Swift program's objects
// mostly are (SamplingTests): 100,000 of each. A sampled one is freed by the thread's very next
// call, before any other look at its header.
final class Small {
  var value = 1
}

final class Large {
  var words = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
}

@inline(never) func make(_ i: Int) -> AnyObject { i & 1 == 0 ? Small() : Large() }

var made = 0
for i in 0..<200_000 {
  let object = make(i)
  made += ObjectIdentifier(object).hashValue & 1 >= 0 ? 1 : 0
}
print("made \(made)")
