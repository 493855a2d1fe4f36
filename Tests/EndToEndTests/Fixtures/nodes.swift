// A Swift program with known allocation stacks for the readable-stack tests: makeNodes(count:)
// makes 25 Node objects in a closure passed to map.
final class Node {
  var value = 0
}

@inline(never) func makeNodes(count: Int) -> [Node] {
  (0..<count).map { _ in Node() }
}

var kept: [[Node]] = []
kept.append(makeNodes(count: 25))
