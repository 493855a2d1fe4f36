// A Swift program whose objects' retainers the tests know (RetainersEndToEndTests), recorded
// with `heapline record --graph`. It keeps:
//  - three CachedImage objects in a dictionary that the global `cache` holds;
//  - two ObservedImage objects, each captured by a closure in the observer list that the
//    global `center` holds;
//  - two ParkedImage objects only in a buffer on a thread's stack, while the thread waits on a
//    semaphore and the main thread scans (heapline_check_leaks, found with dlsym).
// It prints where the truth lies that the ABI does not fix: each cached image's offset in the
// dictionary's storage (its bucket), and the parked thread's id.
// Layouts (x86-64): an object has a 16-byte header; ObserverCenter keeps its array at +0x10;
// an array's storage keeps its elements from +0x20, and a closure is two words (function,
// context), so closure i's context is at 0x28 + 0x10 × i; the closure's context keeps its
// captures from +0x10, the image first. (It captures the tag too: a closure whose only capture
// is one object uses the object itself as its context.)
import Dispatch

#if canImport(Glibc)
  import Glibc
#endif

final class CachedImage { var pixels = 0 }
final class ObservedImage { var pixels = 0 }
final class ParkedImage { var pixels = 0 }

final class ObserverCenter {
  var observers: [() -> Int] = []
}

nonisolated(unsafe) var cache: [String: CachedImage] = [:]
nonisolated(unsafe) let center = ObserverCenter()

typealias CheckLeaks = @convention(c) (UnsafeMutableRawPointer?) -> Int32
typealias UsableSize = @convention(c) (UnsafeRawPointer) -> Int
typealias GetTID = @convention(c) () -> Int32

/// A C function that Glibc's module does not import.
func libc<T>(_ name: String, as type: T.Type) -> T {
  unsafeBitCast(dlsym(nil, name)!, to: type)
}

@inline(never) func fillCache() {
  for name in ["a", "b", "c"] { cache[name] = CachedImage() }
  let storage = unsafeBitCast(cache, to: UnsafeRawPointer.self)
  let words = libc("malloc_usable_size", as: UsableSize.self)(storage) / 8
  var offsets: [Int] = []
  for image in cache.values {
    let address = UInt(bitPattern: Unmanaged.passUnretained(image).toOpaque())
    for word in 0..<words where storage.load(fromByteOffset: word * 8, as: UInt.self) == address {
      offsets.append(word * 8)
    }
  }
  print("cache " + offsets.sorted().map { String($0) }.joined(separator: " "))
}

@inline(never) func observe() {
  for tag in 0..<2 {
    let image = ObservedImage()
    center.observers.append { image.pixels + tag }
  }
}

@inline(never) func park(_ parked: DispatchSemaphore, _ resume: DispatchSemaphore) {
  withUnsafeTemporaryAllocation(of: ParkedImage.self, capacity: 2) { buffer in
    _ = buffer.initialize(from: [ParkedImage(), ParkedImage()])
    print("thread \(libc("gettid", as: GetTID.self)())")
    parked.signal()
    resume.wait()
    _ = buffer.deinitialize()
  }
}

fillCache()
observe()
let parked = DispatchSemaphore(value: 0)
let resume = DispatchSemaphore(value: 0)
var thread = pthread_t()
let box = Unmanaged.passRetained((parked, resume) as AnyObject)
pthread_create(
  &thread, nil,
  { context in
    let pair = Unmanaged<AnyObject>.fromOpaque(context!).takeRetainedValue()
    let (parked, resume) = pair as! (DispatchSemaphore, DispatchSemaphore)
    park(parked, resume)
    return nil
  }, box.toOpaque())
parked.wait()
if let check = dlsym(nil, "heapline_check_leaks") {
  print("check \(unsafeBitCast(check, to: CheckLeaks.self)(nil))")
}
resume.signal()
pthread_join(thread, nil)
