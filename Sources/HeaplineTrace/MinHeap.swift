/// A binary min-heap: the merge's queue of open chunks, smallest next event first.
struct MinHeap<Element: Comparable> {
  private(set) var elements: [Element] = []

  var isEmpty: Bool { elements.isEmpty }
  var count: Int { elements.count }
  var min: Element? { elements.first }
  /// The smallest element after the min: one of the min's two children.
  var secondMin: Element? {
    guard elements.count > 2 else { return elements.count == 2 ? elements[1] : nil }
    return Swift.min(elements[1], elements[2])
  }

  mutating func push(_ element: Element) {
    elements.append(element)
    siftUp(from: elements.count - 1)
  }

  /// Replaces the smallest element: one sift instead of a pop and a push.
  mutating func replaceMin(with element: Element) {
    guard !elements.isEmpty else { return push(element) }
    elements[0] = element
    siftDown(from: 0)
  }

  mutating func popMin() -> Element? {
    guard !elements.isEmpty else { return nil }
    elements.swapAt(0, elements.count - 1)
    let result = elements.removeLast()
    if !elements.isEmpty { siftDown(from: 0) }
    return result
  }

  private mutating func siftUp(from start: Int) {
    var child = start
    while child > 0 {
      let parent = (child - 1) / 2
      guard elements[child] < elements[parent] else { return }
      elements.swapAt(child, parent)
      child = parent
    }
  }

  private mutating func siftDown(from start: Int) {
    var parent = start
    while true {
      let left = 2 * parent + 1
      let right = left + 1
      var smallest = parent
      if left < elements.count, elements[left] < elements[smallest] { smallest = left }
      if right < elements.count, elements[right] < elements[smallest] { smallest = right }
      if smallest == parent { return }
      elements.swapAt(parent, smallest)
      parent = smallest
    }
  }
}
