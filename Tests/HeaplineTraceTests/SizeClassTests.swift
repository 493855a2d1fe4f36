import HeaplineTrace
import Testing

@Suite("Size classes are named as Object Alloc names them")
struct SizeClassTests {
  @Test(
    "an allocation falls in the smallest class that holds it",
    arguments: [
      (0, "Malloc 0 Bytes"), (1, "Malloc 16 Bytes"), (16, "Malloc 16 Bytes"),
      (17, "Malloc 32 Bytes"), (40, "Malloc 48 Bytes"), (48, "Malloc 48 Bytes"),
      (1000, "Malloc 1008 Bytes"), (1024, "Malloc 1.00 KiB"), (1025, "Malloc 1.25 KiB"),
      (1280, "Malloc 1.25 KiB"), (2048, "Malloc 2.00 KiB"), (2049, "Malloc 2.50 KiB"),
      (2 << 20, "Malloc 2.00 MiB"), ((2 << 20) + 1, "Malloc 2.50 MiB"),
      (3 << 30, "Malloc 3.00 GiB"),
    ] as [(UInt64, String)])
  func names(size: UInt64, name: String) {
    #expect(SizeClass(containing: size).name == name)
    #expect(CategoryInfo(sizeClass: CategoryID(sizeClassFor: size)).name == name)
  }

  @Test("class indices follow the spec's formula")
  func indices() {
    #expect(SizeClass(containing: 48).index == 3)
    #expect(SizeClass(containing: 1024).index == 64)
    #expect(SizeClass(containing: 1025).index == 65)  // e = 0, s = 1
    #expect(SizeClass(containing: 2 << 20).index == 108)  // e = 10, s = 4
    #expect(SizeClass(index: 108).bytes == 2 << 20)
  }

  @Test("every size maps to a class that holds it, up to the largest 64-bit size")
  func holdsSize() {
    for size: UInt64 in [1023, 1024, 1025, 4097, 1 << 40, (1 << 63) + 1, .max] {
      let sizeClass = SizeClass(containing: size)
      if let bytes = sizeClass.bytes { #expect(bytes >= size) }
    }
    #expect(SizeClass(index: 1000).bytes == nil)
    #expect(SizeClass(index: 1000).name == "Malloc size class 1000")
  }

  @Test("ids from 0x400 up are named categories, not size classes")
  func namedIDs() {
    #expect(CategoryID(0x3FF).isSizeClass)
    #expect(!CategoryID(0x400).isSizeClass)
  }
}
