// A cycle whose blocks are more than its path: an A holds an array of two Bs, each B holds
// the A back (ViewEndToEndTests). All dropped.
final class Holder { var parts: [Part] = [] }
final class Part { var holder: Holder? }

@inline(never) func makeCycle() {
  let holder = Holder()
  holder.parts = [Part(), Part()]
  for part in holder.parts { part.holder = holder }
}

makeCycle()
print("made")
