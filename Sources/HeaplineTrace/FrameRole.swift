/// Why a frame is left out of a readable stack, or ``user`` when it is shown.
///
/// Every stack starts in the allocator (`malloc`, `swift_slowAlloc`, `swift_allocObject`) and
/// ends in the C library's start-up code; Swift adds thunks in between. None of them is where
/// the user looks for the cause, so stacks show the rest, and JSON marks each frame's role.
///
/// ```swift
/// let roles = FrameRole.roles(of: frames)  // [.allocator, .allocator, .user, .processStart]
/// let shown = FrameRole.userFrames(frames)  // the frames whose role is .user
/// ```
public enum FrameRole: String, Hashable, Sendable {
  /// The user's code, or a library's: shown.
  case user
  /// An allocator entry above the first user frame: the malloc family, `operator new`, the
  /// Swift runtime's allocation functions, the shim.
  case allocator
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
    var roles = frames.map { $0.isThunk ? FrameRole.thunk : .user }
    var top = 0
    while top < frames.count, isAllocatorEntry(frames[top]) || frames[top].isThunk {
      roles[top] = frames[top].isThunk ? .thunk : .allocator
      top += 1
    }
    // From the C library's start of main or of a thread down, whatever the frames below are
    // named (`_start` has no symbol in a stripped or rebuilt program).
    if let start = frames[top...].firstIndex(where: isProcessStart) {
      for index in start..<frames.count { roles[index] = .processStart }
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
    zip(frames, roles(of: frames)).first { $0.1 == .user }?.0
  }

  /// How many frames at the top of `frames` are allocator entries or thunks: the index of the
  /// first user frame when it is less than `frames.count`.
  public static func leadingHiddenCount(_ frames: [SymbolizedFrame]) -> Int {
    frames.prefix { isAllocatorEntry($0) || $0.isThunk }.count
  }

  static func isAllocatorEntry(_ frame: SymbolizedFrame) -> Bool {
    if let module = frame.moduleName, module.hasPrefix("libheapline-preload") { return true }
    guard let name = frame.function else { return false }
    if allocatorEntries.contains(name) || name.hasPrefix("operator new") { return true }
    // The shim's C functions, linked into an in-process recording's binary; a Swift module
    // named heapline_something is not one (its names hold dots).
    let isCName = name.utf8.allSatisfy {
      $0 == 0x5f || (0x30...0x39).contains($0) || (0x41...0x5a).contains($0)
        || (0x61...0x7a).contains($0)
    }
    return isCName && (name.hasPrefix("heapline_") || name.hasPrefix("hl_"))
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
