// More classes than a program of one module usually has: Pair<A, B> for A and B each of 70
// types (Int, Tag<Int>, Tag<Tag<Int>>, …, made at run time), 4,900 classes, one object of each
// kept to the end.
//
//   manyclasses [N]    N types on each side (default 70)
final class Tag<T> {}
final class Pair<A, B> {
  var value = 0
}

var kept: [AnyObject] = []

func pairs<A>(_ a: A.Type, row: Int, count: Int) {
  func column<B>(_ b: B.Type, _ k: Int) {
    kept.append(Pair<A, B>())
    if k + 1 < count { column(Tag<B>.self, k + 1) }
  }
  column(Int.self, 0)
  if row + 1 < count { pairs(Tag<A>.self, row: row + 1, count: count) }
}

let count = CommandLine.arguments.count > 1 ? Int(CommandLine.arguments[1]) ?? 70 : 70
kept.reserveCapacity(count * count)
pairs(Int.self, row: 0, count: count)
print("made \(kept.count) objects of \(kept.count) classes")
