/// Why a frame is left out of a readable stack, or ``user`` when it is shown.
///
/// Every stack starts in the allocator (`malloc`, `swift_slowAlloc`, `swift_allocObject`),
/// often in the Swift standard library under it, and ends in the C library's start-up code;
/// Swift adds thunks in between. None of them is where the user looks for the cause, so stacks
/// show the rest, and JSON marks each frame's role.
///
/// ```swift
/// let roles = FrameRole.roles(of: frames)  // [.allocator, .allocator, .user, .processStart]
/// let shown = FrameRole.userFrames(frames)  // the frames whose role is .user
/// ```
public enum FrameRole: String, Hashable, Sendable {
  /// The user's code, or a library's: shown.
  case user
  /// An allocator entry above the first user frame: the malloc family, `operator new`, the
  /// Swift runtime's allocation functions and a class's allocating initializer, the shim.
  case allocator
  /// A frame of the Swift runtime or standard library (`libswiftCore.so`, `libswift_*.so`)
  /// between the allocator and the first user frame: `String`'s or `Array`'s storage
  /// growing, on the user's behalf. A stack that never leaves them shows them.
  case runtime
  /// A thunk or reabstraction frame the Swift compiler made: collapsed.
  case thunk
  /// The process or thread start below `main` (`__libc_start_call_main`, `_start`,
  /// `start_thread`, `clone3`).
  case processStart = "process_start"

  /// The role of each frame of a stack given innermost first.
  ///
  /// Allocator entries count only in the run at the top of the stack: a program's own function
  /// named `malloc` further in is the user's. Start-up frames are the first that glibc's
  /// start of `main` or of a thread names, and every frame below it. When every frame would be
  /// hidden, all are shown, so a stack is never empty.
  public static func roles(of frames: [SymbolizedFrame]) -> [FrameRole] {
    roles(traits: frames.map(Traits.init))
  }

  /// What ``roles(of:)`` reads of a frame: found once for a frame that many stacks share, as
  /// names are matched against lists and prefixes.
  public struct Traits: Sendable {
    var isThunk: Bool
    var isAllocatorEntry: Bool
    var isSwiftRuntime: Bool
    var isProcessStart: Bool

    /// The traits of `frame`.
    public init(_ frame: SymbolizedFrame) {
      isThunk = frame.isThunk
      isAllocatorEntry = FrameRole.isAllocatorEntry(frame)
      isSwiftRuntime = FrameRole.isSwiftRuntime(frame)
      isProcessStart = FrameRole.isProcessStart(frame)
    }

    var isLeadingHidden: Bool { isAllocatorEntry || isThunk || isSwiftRuntime }
  }

  /// ``roles(of:)`` for frames given by their traits, innermost first.
  public static func roles(traits frames: [Traits]) -> [FrameRole] {
    var roles = frames.map { $0.isThunk ? FrameRole.thunk : .user }
    var top = 0
    while top < frames.count, frames[top].isAllocatorEntry || frames[top].isThunk {
      roles[top] = frames[top].isThunk ? .thunk : .allocator
      top += 1
    }
    var library = top
    while library < frames.count, frames[library].isLeadingHidden {
      if !frames[library].isThunk {
        roles[library] = frames[library].isAllocatorEntry ? .allocator : .runtime
      }
      library += 1
    }
    // From the C library's start of main or of a thread down, whatever the frames below are
    // named (`_start` has no symbol in a stripped or rebuilt program).
    if let start = frames[top...].firstIndex(where: \.isProcessStart) {
      for index in start..<frames.count { roles[index] = .processStart }
    }
    if !roles.contains(.user) {
      roles = roles.map { $0 == .runtime ? .user : $0 }
    }
    if !roles.contains(.user) { return frames.map { _ in .user } }
    return roles
  }

  /// The frames of `frames` (innermost first) that a readable stack shows.
  public static func userFrames(_ frames: [SymbolizedFrame]) -> [SymbolizedFrame] {
    zip(frames, roles(of: frames)).filter { $0.1 == .user }.map(\.0)
  }

  /// The first frame a readable stack shows, or `nil` for an empty stack.
  public static func firstUserFrame(_ frames: [SymbolizedFrame]) -> SymbolizedFrame? {
    firstUserIndex(traits: frames.map(Traits.init)).map { frames[$0] }
  }

  /// The index of ``firstUserFrame(_:)`` in frames given by their traits.
  public static func firstUserIndex(traits: [Traits]) -> Int? {
    roles(traits: traits).firstIndex(of: .user)
  }

  /// How many frames at the top of `frames` are allocator entries, Swift runtime frames or
  /// thunks: the index of the first user frame when it is less than `frames.count`.
  public static func leadingHiddenCount(_ frames: [SymbolizedFrame]) -> Int {
    leadingHiddenCount(traits: frames.map(Traits.init))
  }

  /// ``leadingHiddenCount(_:)`` for frames given by their traits.
  public static func leadingHiddenCount(traits: [Traits]) -> Int {
    traits.prefix(while: \.isLeadingHidden).count
  }

  /// The Swift runtime and standard library: libswiftCore.so, libswift_Concurrency.so…, and
  /// the standard library's generic code that the compiler specialized or inlined into the
  /// program's own module (`generic specialization <Swift.UInt8> of static Swift.Array.…`).
  static func isSwiftRuntime(_ frame: SymbolizedFrame) -> Bool {
    if let name = frame.function, entity(of: name).hasPrefix("Swift.") { return true }
    guard let module = frame.moduleName else { return false }
    return module.hasPrefix("libswiftCore.so") || module.hasPrefix("libswift_")
      || module.hasPrefix("libswiftSwiftOnoneSupport.so")
  }

  /// A demangled name without the specializations and modifiers before its entity.
  private static func entity(of name: String) -> Substring {
    var rest = Substring(name)
    while true {
      if rest.hasPrefix("generic specialization <")
        || rest.hasPrefix("function signature specialization <"),
        let of = rest.range(of: "> of ")
      {
        rest = rest[of.upperBound...]
      } else if let modifier = ["specialized ", "static ", "merged "].first(where: rest.hasPrefix) {
        rest = rest.dropFirst(modifier.count)
      } else {
        return rest
      }
    }
  }

  static func isAllocatorEntry(_ frame: SymbolizedFrame) -> Bool {
    if let module = frame.moduleName, module.hasPrefix("libheapline-preload") { return true }
    guard let name = frame.function else { return false }
    if allocatorEntries.contains(name) || name.hasPrefix("operator new") { return true }
    // A class's allocating initializer only calls swift_allocObject, then init: the object
    // was made where it was called.
    if name.contains(".__allocating_init(") { return true }
    // The shim's internal C functions, linked into an in-process recording's binary (its
    // hooks are named as the functions they wrap). Not `heapline_`: SwiftPM names an
    // executable's main `<module>_main`, heapline_demo_main for one of ours.
    return name.hasPrefix("hl_") && !name.contains(".")
  }

  static func isProcessStart(_ frame: SymbolizedFrame) -> Bool {
    guard let name = frame.function else { return false }
    return startFunctions.contains(name)
  }

  /// C names the allocating hooks wrap, and the Swift runtime's entries that call them.
  private static let allocatorEntries: Set<String> = [
    "malloc", "calloc", "realloc", "reallocarray", "free", "posix_memalign", "aligned_alloc",
    "memalign", "valloc", "pvalloc", "__libc_malloc", "__libc_calloc", "__libc_realloc",
    "__libc_memalign", "swift_slowAlloc", "swift_slowAllocTyped", "swift_allocObject",
    "swift_allocBox", "swift_allocEmptyBox", "swift_allocError", "swift_task_alloc",
    "swift_initStackObject", "swift_coroFrameAlloc", "swift_allocPod",
  ]

  /// What glibc runs before `main` and around a thread's start routine.
  private static let startFunctions: Set<String> = [
    "__libc_start_call_main", "__libc_start_main", "__libc_start_main_impl",
    "__libc_start_main_alias_2", "_start", "start_thread", "clone3", "__clone3",
  ]
}
