// A Swift program that traps a moment after it starts, with a few objects made (LeaveTheProgramAloneTests):
// the runtime's crash handler suspends every other thread, the shim's included, to show their
// backtraces.
final class Made {
  var value = 1
}

nonisolated(unsafe) var made: [Made] = []
for _ in 0..<5 { made.append(Made()) }
fatalError("at once, \(made.count) made")
