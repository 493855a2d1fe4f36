// Two classes that print alike, each local to a function: 3 objects of the first, 5 of the
// second, all kept (SwiftNamesEndToEndTests).
nonisolated(unsafe) var kept: [AnyObject] = []

@inline(never) func makeFirst() {
  final class Local { var value = 1 }
  for _ in 0..<3 { kept.append(Local()) }
}

@inline(never) func makeSecond() {
  final class Local {
    var value = 1
    var other = 2
  }
  for _ in 0..<5 { kept.append(Local()) }
}

makeFirst()
makeSecond()
print(kept.count)
