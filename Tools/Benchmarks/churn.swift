// Allocation churn in Swift for the tracer benchmark (run.sh): COUNT class instances made at
// DEPTH recursive calls below main and dropped a little later.
//
//   churn-swift COUNT DEPTH
//
// Each instance goes through swift_allocObject -> swift_slowAlloc -> malloc, and back through
// swift_release -> swift_deallocClassInstance -> free, so the tracer sees the Swift runtime's
// frames on top of ours and has a class header to name. Instances are kept in a ring, so they
// escape: -O cannot promote them to the stack or remove them.

final class Point {
  var x: Int
  var y: Int
  init(_ x: Int, _ y: Int) {
    self.x = x
    self.y = y
  }
}

final class Record {
  var id: Int
  var values: (Int, Int, Int, Int, Int, Int)
  init(_ id: Int) {
    self.id = id
    values = (id, id, id, id, id, id)
  }
}

final class Counter {
  var count = 0
}

@inline(never)
func makeInstance(_ i: Int) -> AnyObject {
  switch i & 3 {
  case 0, 1: return Point(i, i &+ 1)
  case 2: return Record(i)
  default:
    let c = Counter()
    c.count = i
    return c
  }
}

// Returns a sum along with the instance, and adds to it after the recursive call, so that -O
// keeps every level's frame. No globals: a global would add an exclusivity check
// (swift_beginAccess) at every level, which then dominates the untraced time.
@inline(never)
func descend(_ depth: Int, _ i: Int) -> (AnyObject, Int) {
  if depth == 0 { return (makeInstance(i), 0) }
  let (object, sum) = descend(depth - 1, i)
  return (object, sum &+ depth)
}

@inline(never)
func churn(count: Int, depth: Int) -> Int {
  // Where instances live until their slot comes round again.
  var ring = [AnyObject?](repeating: nil, count: 256)
  var sum = 0
  for i in 0..<count {
    let (object, levels) = descend(depth, i)
    ring[i & 255] = object  // releases the instance made 256 steps ago
    sum &+= levels
    if let p = object as? Point { sum &+= p.y }
  }
  for k in ring.indices { ring[k] = nil }
  return sum
}

let arguments = CommandLine.arguments
let count = arguments.count > 1 ? Int(arguments[1]) ?? 3_000_000 : 3_000_000
let depth = arguments.count > 2 ? Int(arguments[2]) ?? 11 : 11
print("\(count) instances, checksum \(churn(count: count, depth: depth))")
