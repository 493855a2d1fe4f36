import Testing

@testable import HeaplineTrace

/// Events are plain data, so a pass copies millions of them without a retain, and their
/// strings still read and compare as strings.
@Suite struct EventPlainDataTests {
  @Test func everyEventIsPlainData() {
    #expect(_isPOD(TraceEvent.self))
    #expect(_isPOD(MemoryEvent.self))
  }

  @Test func aMarksNameReadsComparesAndChangesAsAString() {
    // Given two marks named alike, made apart, and a third named otherwise
    let first = MarkEvent(time: 1, kind: .generation, name: "after load", threadSerial: 1)
    let second = MarkEvent(time: 1, kind: .generation, name: "after " + "load", threadSerial: 1)
    var third = MarkEvent(time: 1, kind: .generation, name: "before load", threadSerial: 1)
    // Then the alike ones are equal and hash alike, and the other is not equal
    #expect(first.name == "after load")
    #expect(first == second)
    #expect(Set([first, second]).count == 1)
    #expect(first != third)
    // And renamed, the third reads its new name and equals the first
    third.name = "after load"
    #expect(third.name == "after load")
    #expect(third == first)
  }

  @Test(arguments: [
    "", "every 1", "signal 4294967295", String(repeating: "x", count: 23), "Grüße, 世界 ☃",
    String(repeating: "y", count: 24), "a name that code chose, longer than most",
  ])
  func aNameOfAnyLengthReadsBackAsItWasAndEqualsItsTwin(name: String) {
    let mark = MarkEvent(time: 0, kind: .generation, name: name, threadSerial: 0)
    let twin = MarkEvent(time: 0, kind: .generation, name: String(name.utf8) ?? "", threadSerial: 0)
    #expect(mark.name == name)
    #expect(mark == twin)
    #expect(mark.hashValue == twin.hashValue)
    #expect(mark != MarkEvent(time: 0, kind: .generation, name: name + "!", threadSerial: 0))
  }

  @Test func namesOfUpTo23BytesTakeNoMemoryBeyondTheirEvents() {
    // Given a table that holds what earlier tests put there
    let before = EventText.tabledCount
    // When a million marks are named as --mark-every names them
    for index in 0..<1_000_000 {
      _ = MarkEvent(time: 0, kind: .generation, name: "every \(index)", threadSerial: 0)
    }
    // Then the table kept none of them (other tests may add long names meanwhile, a few)
    #expect(EventText.tabledCount - before < 100)
  }

  @Test func anObserversNameReadsAndComparesAsAString() {
    let a = WarningResponse(serial: 3, observer: "ImageCache", freedBytes: 10)
    let b = WarningResponse(serial: 3, observer: "Image" + "Cache", freedBytes: 10)
    #expect(a.observer == "ImageCache")
    #expect(a == b)
    #expect(a != WarningResponse(serial: 3, observer: "FontCache", freedBytes: 10))
  }
}
