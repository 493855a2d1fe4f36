import HeaplineTrace

/// The runtimes' own blocks, which `heapline leaks` leaves out unless
/// `--no-default-suppressions`: the dynamic loader's, the C and C++ runtimes' and the Swift
/// runtime's internal caches. They live as long as the process and are not the program's leaks,
/// but some of them are reached only through pointers that a scan cannot see (ld.so's
/// `_dlfo_mappings_segment_allocate` segments, for one, only through pointers into their middle).
///
/// As LeakSanitizer's built-in suppressions do, each is matched against the symbolized
/// allocation stack; here against the frame that called the allocator (the first frame that is
/// not `malloc`, `operator new` or `swift_slowAlloc`), so that a program's own leak is never
/// left out because a runtime function lies further out on its stack (a constructor that
/// `dlopen` runs, say).
///
/// ```swift
/// let rule = LeakDefaultSuppression.all.first { $0.matches(frames) }
/// rule?.name  // "loader"
/// ```
public struct LeakDefaultSuppression: Hashable, Sendable {
  /// A short name: `loader`, `c-runtime`, `c++-runtime`, `swift-runtime` or `dispatch`.
  public var name: String
  /// What it leaves out, for reports.
  public var summary: String
  /// Module file names (globs) that the allocating frame must lie in.
  var modules: [String]
  /// Function names (globs) that the allocating frame must have; empty: any.
  var functions: [String] = []
  /// Function names (globs) that the allocating frame must not have.
  var exceptFunctions: [String] = []

  /// The default suppressions, in the order they are tried.
  public static let all: [LeakDefaultSuppression] = [
    LeakDefaultSuppression(
      name: "loader",
      summary: "the dynamic loader's own blocks (dlopen, dl_find_object, TLS)",
      modules: ["ld-linux*.so*", "ld-*.so*", "ld.so*"]),
    LeakDefaultSuppression(
      name: "c-runtime",
      summary: "the C runtime's internal blocks (stdio buffers, locales, exit handlers, NSS)",
      modules: ["libc.so*", "libc-*.so"],
      functions: [
        "_IO_file_doallocate", "__new_exitfn", "_nl_*", "__gconv*", "__nss_*", "nss_*",
        "_nss_*", "__tzfile_read", "tzset_internal", "__tzstring*", "__libc_dlerror_result*",
        "_dlerror_run", "setlocale", "__libc_alloc_buffer_allocate",
      ]),
    LeakDefaultSuppression(
      name: "c++-runtime",
      summary: "the C++ runtime's internal blocks (the exception emergency pool, locales)",
      modules: ["libstdc++.so*", "libc++.so*", "libc++abi.so*"],
      functions: [
        "(anonymous namespace)::pool::pool*", "__cxa_get_globals*", "__cxa_thread_atexit*",
        "std::locale::*", "__gnu_cxx::__freeres*",
      ]),
    LeakDefaultSuppression(
      name: "swift-runtime",
      summary: "the Swift runtime's internal blocks (metadata, conformance and type caches)",
      modules: ["libswiftCore.so*", "libswift_Concurrency.so*"],
      functions: ["*"],
      // Objects, boxes and errors are the program's, allocated through these entry points.
      exceptFunctions: [
        "swift_alloc*", "swift::swift_alloc*", "swift_initStackObject*", "swift_bufferAllocate*",
        "*allocError*", "swift_task_alloc*", "swift_job_alloc*", "swift_task_create*",
      ]),
    LeakDefaultSuppression(
      name: "dispatch",
      summary: "libdispatch's cached continuations (kept for reuse by each thread)",
      modules: ["libdispatch.so*"], functions: ["_dispatch_continuation_alloc*"]),
  ]

  /// Frames of the allocator itself, skipped to find the frame that called it.
  static let allocatorFunctions = [
    "malloc", "calloc", "realloc", "reallocarray", "posix_memalign", "aligned_alloc", "memalign",
    "valloc", "pvalloc", "__libc_malloc", "__libc_calloc", "__libc_realloc", "__libc_memalign",
    "operator new*", "swift_slowAlloc", "swift::swift_slowAlloc*", "__rtld_malloc*",
  ]

  /// The frame that called the allocator: the first of `frames` (innermost first) that is not
  /// the allocator's.
  public static func allocatingFrame(_ frames: [SymbolizedFrame]) -> SymbolizedFrame? {
    frames.first { frame in
      guard let function = frame.function else { return true }
      return !allocatorFunctions.contains { Glob.matches(pattern: $0, text: function) }
    }
  }

  /// Whether this suppression matches an allocation stack, innermost frame first.
  public func matches(_ frames: [SymbolizedFrame]) -> Bool {
    guard let frame = Self.allocatingFrame(frames), let module = frame.moduleName,
      modules.contains(where: { Glob.matches(pattern: $0, text: module) })
    else { return false }
    if functions.isEmpty { return true }
    // Without a name (not symbolized) the frame could be any function: never suppressed.
    guard let function = frame.function else { return false }
    return functions.contains { Glob.matches(pattern: $0, text: function) }
      && !exceptFunctions.contains { Glob.matches(pattern: $0, text: function) }
  }

  /// The first default suppression that matches every one of the group's members, if any.
  static func match(_ group: LeakGroup) -> LeakDefaultSuppression? {
    guard let first = group.members.first else { return nil }
    return all.first { rule in
      rule.matches(first.frames)
        && group.members.allSatisfy { member in
          all.contains { $0.matches(member.frames) }
        }
    }
  }

  /// How many blocks one default suppression left out of a report.
  public struct Count: Hashable, Sendable {
    public var suppression: LeakDefaultSuppression
    /// The groups it left out.
    public var groups: Int
    /// Their blocks and bytes, of every kind.
    public var amount: LeakAmount
  }
}

extension Glob {
  static func matches(pattern: String, text: String) -> Bool {
    matches(pattern: Array(pattern.utf8), text: Array(text.utf8))
  }
}
