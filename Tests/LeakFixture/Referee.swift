// The "referee" scenario: the Swift program that memcheck and heaptrack referee (RefereeTests).
//   cycles    3 pairs of RefereeNode (56 B each: a 16-byte header, `next`, four Ints) that
//             point to each other                                  lost: 6 blocks, 336 B
//   mapped    5 RefereeNodes retained only from an anonymous       still reachable
//             mapping that the program made itself
// It also loads a library with dlopen, whose loader keeps blocks of its own (not leaks).
#if canImport(Glibc)
  import Glibc
#endif

final class RefereeNode {
  var next: RefereeNode?
  var payload = (0, 0, 0, 0)
}

@inline(never) func refereeLeakCycles() {
  for _ in 0..<3 {
    let a = RefereeNode()
    let b = RefereeNode()
    a.next = b
    b.next = a
  }
}

// The mapping's address is forgotten too: only it holds the nodes.
@inline(never) func refereeKeepInMapping() {
  guard let mapped = mmap(nil, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0),
    mapped != MAP_FAILED
  else { exit(3) }
  let region = mapped.assumingMemoryBound(to: UnsafeMutableRawPointer.self)
  for i in 0..<5 { region[i * 3] = Unmanaged.passRetained(RefereeNode()).toOpaque() }
}

func runReferee() {
  refereeLeakCycles()
  refereeKeepInMapping()
  guard dlopen("libresolv.so.2", RTLD_NOW) != nil else { exit(4) }
  print("done")
}
