// dlopen and dlclose: the module map is written when a library comes, and checked once more just
// before it goes, so that the frames of a library that came and went between two of the shim's
// periodic looks (every 5 s) are still named offline.
#include <dlfcn.h>

#include "unwind.h"

static void note_modules(void) {
  if (atomic_load(&hl_state) != HL_ON || hl_tls.internal || hl_tls.guard) return;
  hl_enter();
  struct hl_buffer *b = hl_acquire();
  if (b) {
    hl_modules_emit_if_changed(b, 0);
    hl_release(b);
  }
  hl_leave();
}

// The calls begun and ended, for a leak scan to tell whether a module came or went while it
// ran, without asking the loader: a thread inside dlclose holds the loader's lock while it frees
// the module's pieces, and so may wait for the live table, which the scan holds (leakctl.c).
_Atomic uint64_t hl_dl_begun, hl_dl_ended;

void *dlopen(const char *file, int mode) {
  static void *(*next)(const char *, int);
  if (!next) next = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
  atomic_fetch_add(&hl_dl_begun, 1);
  void *handle = next(file, mode);
  atomic_fetch_add(&hl_dl_ended, 1);
  if (handle) note_modules();
  return handle;
}

int dlclose(void *handle) {
  static int (*next)(void *);
  if (!next) next = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
  note_modules();  // while the library is still loaded, and so still in the map
  atomic_fetch_add(&hl_dl_begun, 1);
  int result = next(handle);
  atomic_fetch_add(&hl_dl_ended, 1);
  hl_unwind_forget_rules();  // its code may be gone, and another module come in its place
  return result;
}
